package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// crashUpserts is how many upserts the crash test carries through.
const crashUpserts = 100

// TestSIGKILLDuringUpserts runs the built server with a signing key and an
// admin token and carries 100 upserts through it while killing it with
// SIGKILL at random moments: after a random number of answered upserts,
// a random fraction of an upsert's time after sending the next one. After
// every kill the registry is read as a restarting server reads it; it must
// be valid, signed by the curator, and equal either to the state before
// the interrupted upsert or to the state after it; every line of the audit
// log must be whole, and every state the registry reached must have one. The seed is logged; THREEGS_CRASH_SEED replays
// a run.
func TestSIGKILLDuringUpserts(t *testing.T) {
	testkit.Long(t, "it restarts the server after each of dozens of SIGKILLs during 100 signed upserts and checks the registry and audit log after each")
	t.Parallel() // half a minute of its own stdio servers, no port, no shared file
	bin := testkit.Binary(t)
	n := curator.New(t, "")
	n.Write(t, curator.Basic(t))
	dir, regPath, keyPath, key := n.Dir, n.Registry, n.KeyFile, n.Key
	tokens := filepath.Join(dir, "tokens.json")
	tok, err := exec.Command(bin, "token", "new", "--tokens", tokens, "--tier", "admin", "--name", "crash").Output()
	if err != nil {
		t.Fatal(err)
	}

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("THREEGS_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d (THREEGS_CRASH_SEED replays it)", seed)

	c := &crashRun{t: t, bin: bin, regPath: regPath, keyPath: keyPath, tokens: tokens, token: strings.TrimSpace(string(tok)), pub: curatorkey.Public(key)}
	c.states = [][]byte{c.check(0, -1)}
	// An upsert's time, measured on an undisturbed server, scales the kill
	// delays so they land inside the write, not only between writes.
	perUpsert := c.measure()
	kills, landedAfter := 0, 0
	for c.done < crashUpserts {
		answered := rng.IntN(4)
		delay := time.Duration(rng.Int64N(int64(perUpsert)))
		before := c.done
		c.runAndKill(answered, delay)
		kills++
		if c.done > before+answered {
			landedAfter++ // the interrupted upsert reached the disk
		}
	}
	t.Logf("%d upserts through %d SIGKILLs; an upsert takes about %v", crashUpserts, kills, perUpsert.Round(time.Microsecond))
	t.Logf("%d kills came after the interrupted upsert reached the disk, %d left a signature for the restart to complete, %d left an audit entry after the signed head for the restart to cut",
		landedAfter, c.repaired, c.pendingSeen)
	// A server that starts removes what interrupted writes left once it is
	// old enough not to be another process's write in progress.
	left := c.leftovers()
	old := time.Now().Add(-2 * safefile.StaleAge)
	for _, f := range left {
		os.Chtimes(f, old, old)
	}
	cmd, stdin, _ := c.start()
	stdin.Close()
	cmd.Wait()
	if rest := c.leftovers(); len(rest) > 0 {
		t.Errorf("%d of %d temporary files left by interrupted writes remain after a restart: %v", len(rest), len(left), rest)
	}
	t.Logf("%d temporary files left by interrupted writes, removed by the next start", len(left))
}

type crashRun struct {
	t                             *testing.T
	bin, regPath, keyPath, tokens string
	token                         string
	pub                           []byte
	done                          int      // upserts known to be on disk
	states                        [][]byte // registry bytes after each upsert
	repaired                      int      // kills that left the signature for the restart to complete
	pendingSeen                   int      // checks that found entries after the signed head
}

// start runs a server on the registry and returns its pipes, initialized.
func (c *crashRun) start() (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	cmd := exec.Command(c.bin, "serve", "--registry", c.regPath, "--key-file", c.keyPath, "--tokens", c.tokens, "--log-level", "error")
	cmd.Env = append(os.Environ(), "THREEGS_TOKEN="+c.token)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"crash","version":"1"}}}`)
	if _, err := out.ReadString('\n'); err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	return cmd, stdin, out
}

// send asks for upsert number rev: the probe category described as
// revision rev.
func (c *crashRun) send(w io.Writer, rev int) {
	args := fmt.Sprintf(`{"slug":"crash-probe","category":{"name":"Crash probe","description":"revision %d","query_patterns":["crash probe one","crash probe two","crash probe three"],"sources":[`+
		`{"rank":1,"name":"A","url":"https://a.example/%d","type":"tool","why":"W"},{"rank":2,"name":"B","url":"https://b.example/","type":"book","why":"W"},`+
		`{"rank":3,"name":"C","url":"https://c.example/","type":"repo","why":"W"}]}}`, rev, rev)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"upsert_category","arguments":%s}}`+"\n", rev, args)
}

// answered reads the answer to upsert rev and fails unless it succeeded.
func (c *crashRun) answered(out *bufio.Reader, rev int) error {
	line, err := out.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":`, rev)) || !strings.Contains(line, `"isError":false`) {
		c.t.Fatalf("upsert %d: %s", rev, line)
	}
	return nil
}

// measure times a few upserts on a server left running, then stops it.
func (c *crashRun) measure() time.Duration {
	cmd, stdin, out := c.start()
	const n = 5
	start := time.Now()
	for range n {
		c.send(stdin, c.done+1)
		if err := c.answered(out, c.done+1); err != nil {
			c.t.Fatal(err)
		}
		c.done++
		c.states = append(c.states, c.check(c.done, -1))
	}
	elapsed := time.Since(start) / n
	stdin.Close()
	cmd.Wait()
	return elapsed
}

// runAndKill starts a server, lets it answer n upserts, sends one more,
// and kills it delay later; then it checks the files.
func (c *crashRun) runAndKill(n int, delay time.Duration) {
	cmd, stdin, out := c.start()
	for range n {
		if c.done == crashUpserts-1 {
			break
		}
		c.send(stdin, c.done+1)
		if err := c.answered(out, c.done+1); err != nil {
			c.t.Fatal(err)
		}
		c.done++
		c.states = append(c.states, c.check(c.done, -1))
	}
	c.send(stdin, c.done+1)
	time.Sleep(delay) // where the kill lands is the point of the test, not a wait for anything
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	stdin.Close()
	// The answer may have been written just before the kill.
	if c.answered(out, c.done+1) == nil {
		c.done++
		c.states = append(c.states, c.check(c.done, -1))
		return
	}
	data := c.check(c.done, c.done+1)
	if !bytes.Equal(data, c.states[c.done]) {
		c.done++
		c.states = append(c.states, data)
	}
}

// check reads the registry as a restarting server does and returns its
// bytes. They must hold revision want, or, when alt is not -1, revision
// alt built on the state of revision want.
func (c *crashRun) check(want, alt int) []byte {
	c.t.Helper()
	// A kill between replacing the registry and renaming its new signature
	// into place leaves a pair that does not match; a restart repairs it.
	if raw, err := os.ReadFile(c.regPath); err == nil {
		if sig, err := os.ReadFile(c.regPath + signature.Suffix); err == nil {
			if _, err := signature.Verify(raw, sig, c.pub); err != nil {
				c.repaired++
			}
		}
	}
	data, doc, err := signature.ReadSigned(c.regPath, registry.MaxSize)
	if err != nil {
		c.t.Fatalf("after upsert %d: reading the registry: %v", want, err)
	}
	reg, err := registry.Load(data)
	if err != nil {
		c.t.Fatalf("after upsert %d: the registry is invalid: %v", want, err)
	}
	if _, err := signature.Verify(data, doc, c.pub); err != nil {
		c.t.Fatalf("after upsert %d: the signature does not verify: %v", want, err)
	}
	got := revision(reg)
	switch {
	case got == want && (want >= len(c.states) || bytes.Equal(data, c.states[want])):
	case got == alt && alt == want+1:
		// The change landed: it must be exactly revision alt on top of
		// the state before, as the server writes it.
		// (measure made the first upserts, so the probe exists by now.)
		prev, _ := registry.Load(c.states[want])
		exp := prev.Document()
		cat, ok := exp.Categories["crash-probe"]
		if !ok {
			c.t.Fatalf("revision %d has no probe category", want)
		}
		cat.Description = "revision " + strconv.Itoa(alt)
		cat.Sources = append([]gen.Source(nil), cat.Sources...)
		cat.Sources[0].URL = "https://a.example/" + strconv.Itoa(alt)
		exp.Categories["crash-probe"] = cat
		major, patch, _ := strings.Cut(exp.Version, ".")
		minor, patch, _ := strings.Cut(patch, ".")
		p, _ := strconv.Atoi(patch)
		exp.Version = major + "." + minor + "." + strconv.Itoa(p+1)
		exp.Updated = reg.Updated() // today, by the server's clock
		if !bytes.Equal(gen.EncodeRegistry(&exp), data) {
			c.t.Fatalf("after an interrupted upsert %d the registry is neither the state before nor the state after:\n%s", alt, data)
		}
	default:
		c.t.Fatalf("the registry holds revision %d, want %d or %d", got, want, alt)
	}
	c.checkAudit(reg, doc)
	return data
}

// checkAudit checks the audit log as 3gs audit verify does: every entry
// whole, linked and signed by the curator, and the entry the registry's
// signature names as the log's head is there and records this registry.
// Entries after that head (a kill between the entry and the registry
// write) are allowed: the next start cuts them.
func (c *crashRun) checkAudit(reg *registry.Registry, doc []byte) {
	c.t.Helper()
	v, err := signature.Verify(reg.Bytes(), doc, c.pub)
	if err != nil {
		c.t.Fatal(err)
	}
	if v.Log == nil {
		if _, err := os.Stat(c.regPath + ".audit.jsonl"); os.IsNotExist(err) {
			return // signed before any change: the first change starts the log
		}
		c.t.Fatalf("revision %d: the registry's signature covers no audit log head", revision(reg))
	}
	rep, err := auditlog.Read(c.regPath+".audit.jsonl", auditlog.Options{Key: c.pub, Mark: v.Log.Seq})
	if err != nil {
		c.t.Fatalf("revision %d: the audit log does not verify: %v", revision(reg), err)
	}
	fit, err := auditlog.Match(rep, reg.SHA256(), v.Log)
	if err != nil {
		c.t.Fatalf("revision %d: the audit log does not end at the registry's signed head: %v", revision(reg), err)
	}
	if fit.Pending > 0 || rep.Torn > 0 {
		c.pendingSeen++
	}
	// And as the curator would check it: the command itself, on the files
	// as the kill left them.
	out, err := exec.Command(c.bin, "audit", "verify", "--pubkey", curatorkey.Encode(c.pub), c.regPath).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "OK: ") {
		c.t.Fatalf("revision %d: 3gs audit verify: %v\n%s", revision(reg), err, out)
	}
}

// revision is the probe category's revision number, 0 before the first.
func revision(reg *registry.Registry) int {
	cat, ok := reg.Category("crash-probe")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(cat.Description, "revision "))
	return n
}

// leftovers are the temporary files interrupted writes left behind.
func (c *crashRun) leftovers() []string {
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(c.regPath), ".*.tmp-*"))
	return m
}
