package registrytest

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/testkit"
)

var (
	scale      = flag.Int("scale", 0, "TestScale: categories in the generated registry, e.g. 100000; 0 skips the test")
	scaleCalls = flag.Int("scale.calls", 2000, "TestScale: get_sources calls timed one at a time")
	scaleEnv   = flag.String("scale.env", "", "TestScale: comma-separated NAME=VALUE settings for the 3gs processes, such as GOMEMLIMIT=400MiB")
	scaleBin   = flag.String("scale.bin", "", "TestScale: a 3gs binary to measure instead of building this tree's, such as an older build to compare")
)

// environ is the environment of the 3gs processes TestScale runs.
func environ() []string {
	env := os.Environ()
	for _, kv := range strings.Split(*scaleEnv, ",") {
		if kv = strings.TrimSpace(kv); kv != "" {
			env = append(env, kv)
		}
	}
	return env
}

// TestMain removes the binary TestScale built.
func TestMain(m *testing.M) { testkit.Main(m) }

// TestScale measures 3gs at a registry size through the real binary, as a
// deployment meets it, and logs the figures; it asserts none of them,
// since timings on a shared machine are not a test. Run it with
//
//	go test ./internal/registry/registrytest -run TestScale -scale 100000 -v
//
// It generates the registry, signs it with 3gs keygen and 3gs sign (which
// also starts its audit log), times 3gs validate, then starts 3gs serve on
// stdio and times process start to the initialize answer and to the first
// get_sources answer, then get_sources one call at a time (p50, p99),
// and reads the server's peak and current resident memory from /proc.
// What must not grow with the registry, the size of the answers that
// could list categories, it does check.
func TestScale(t *testing.T) {
	n := *scale
	if n == 0 {
		t.Skip("run with -scale N (e.g. -scale 100000) to measure 3gs at N generated categories")
	}
	dir := t.TempDir()
	bin := *scaleBin
	if bin == "" {
		bin = testkit.Binary(t)
	}
	keyPath, path := filepath.Join(dir, "curator.key"), filepath.Join(dir, "registry.json")
	out, err := exec.Command(bin, "keygen", "--out", keyPath).Output()
	if err != nil {
		t.Fatalf("keygen: %v", err)
	}
	pub := strings.TrimSpace(string(out))
	if _, err := curatorkey.ParsePublicKey(pub); err != nil {
		t.Fatalf("keygen printed %q", out)
	}
	doc := Generate(n, 1)
	doc.Curator.Pubkey = pub
	data := gen.EncodeRegistry(doc)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("registry: %s, %d bytes (%.0f bytes a category)", Describe(n), len(data), float64(len(data))/float64(n))

	for _, step := range [][]string{{"validate", path}, {"sign", "--key-file", keyPath, path}, {"verify", "--pubkey", pub, path}} {
		took, peak, out := timed(t, bin, step...)
		t.Logf("3gs %s: %v, peak RSS %d MiB (%s)", step[0], took.Round(time.Millisecond), peak>>20, firstLine(out))
	}

	s := startServe(t, bin, "serve", "--registry", path, "--log-level", "warn")
	defer s.stop()
	queries := Queries(doc, *scaleCalls, 2)
	started := time.Now()
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"scale","version":"1"}}}`)
	s.answer()
	initialized := time.Since(started)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.call(1, "get_sources", map[string]any{"query": queries[0]})
	first := time.Since(started)
	t.Logf("serve on stdio: initialize answered %v after the process started, first get_sources %v", initialized.Round(time.Millisecond), first.Round(time.Millisecond))
	hwm, _ := s.memory()
	t.Logf("peak RSS after start-up and the first answer: %d MiB", hwm>>20)

	took := make([]time.Duration, len(queries))
	for i, q := range queries {
		start := time.Now()
		s.call(i+2, "get_sources", map[string]any{"query": q})
		took[i] = time.Since(start)
	}
	slices.Sort(took)
	t.Logf("get_sources through stdio, %d calls one at a time: p50 %v, p99 %v, max %v",
		len(took), took[len(took)/2].Round(time.Microsecond), took[len(took)*99/100].Round(time.Microsecond), took[len(took)-1].Round(time.Microsecond))
	hwm, rss := s.memory()
	t.Logf("server memory after the calls: peak RSS (VmHWM) %d MiB, RSS now %d MiB", hwm>>20, rss>>20)

	// Answers that could list the registry stay the same size at any
	// scale: a page of list_categories, and the no-match answer. That one
	// lists at most listedMost (200) categories, its text within 4,000
	// bytes; a list that is not whole is not repeated in the structured
	// more_categories, so the whole line stays within 8 KB (issue 49's
	// target) at any size.
	for _, c := range []struct {
		name string
		args map[string]any
		most int
	}{
		{"list_categories", map[string]any{}, 64 << 10},
		{"get_sources", map[string]any{"query": "how tall is the eiffel tower"}, 8000},
		{"get_sources", map[string]any{"slug": "no-such-category-anywhere"}, 8 << 10},
		{"list_categories", map[string]any{"filter": "nothing-has-this-word"}, 64 << 10},
	} {
		// The median of a few calls, for what they cost as well.
		var line []byte
		var took []time.Duration
		for i := range 21 {
			start := time.Now()
			line = s.call(len(queries)+10+i, c.name, c.args)
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		t.Logf("%s %v: %d bytes, median %v", c.name, c.args, len(line), took[len(took)/2].Round(time.Microsecond))
		if len(line) > c.most {
			t.Errorf("%s %v answered %d bytes at %d categories; it must stay under %d whatever the registry's size", c.name, c.args, len(line), n, c.most)
		}
	}
}

// timed runs the binary to completion and returns its wall time, its peak
// resident memory and its output. The peak is VmHWM, read from /proc
// while the process runs (it only rises, so the last reading before the
// exit is the peak to within the polling interval): the rusage a parent
// gets counts the parent's own peak from before the exec, and this test's
// process holds the generated registry.
func timed(t *testing.T, bin string, args ...string) (time.Duration, int64, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = environ()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	for {
		select {
		case err := <-done:
			took := time.Since(start)
			if err != nil {
				t.Fatalf("3gs %s: %v\n%s", strings.Join(args, " "), err, out.String())
			}
			return took, peak, out.String()
		case <-time.After(5 * time.Millisecond):
			if hwm, _ := procMemory(cmd.Process.Pid); hwm > peak {
				peak = hwm
			}
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// server is 3gs serve on stdio, spoken to one line at a time.
type server struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startServe(t *testing.T, bin string, args ...string) *server {
	cmd := exec.Command(bin, args...)
	cmd.Env = environ()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &server{t: t, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

func (s *server) send(line string) {
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *server) answer() []byte {
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("no answer: %v", err)
	}
	return line
}

// call sends a tools/call and returns the answer's line.
func (s *server) call(id int, tool string, args map[string]any) []byte {
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	s.send(string(req))
	line := s.answer()
	var msg struct {
		ID    int             `json:"id"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &msg); err != nil || msg.ID != id || msg.Error != nil {
		s.t.Fatalf("%s: answer %.300s (%v)", tool, line, err)
	}
	return line
}

// memory reads the server's peak and current resident set from /proc.
func (s *server) memory() (hwm, rss int64) {
	return procMemory(s.cmd.Process.Pid)
}

// procMemory is the peak (VmHWM) and current (VmRSS) resident set of
// process pid, zero when /proc cannot tell.
func procMemory(pid int) (hwm, rss int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[2] == "kB" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "VmHWM:":
				hwm = kb << 10
			case "VmRSS:":
				rss = kb << 10
			}
		}
	}
	return hwm, rss
}

func (s *server) stop() {
	s.in.Close()
	s.cmd.Wait()
}
