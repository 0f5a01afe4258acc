package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/fixture"
)

// This file holds what TestLoadBalancedFollowers needs besides its story:
// HAProxy (found or installed), processes whose output goes to files, MCP
// calls in both protocol eras, a stand-in origin, and the load clients.

// needHAProxy returns the haproxy binary, installing Debian's package when
// the test may (as root, in CI or with THREEGS_E2E_INSTALL=1). Elsewhere it
// skips, saying how to enable it; in CI a failed install fails the test,
// since a skip there would hide that the deployment was never exercised.
func needHAProxy(t *testing.T) string {
	t.Helper()
	find := func() string {
		if p, err := exec.LookPath("haproxy"); err == nil {
			return p
		}
		// /usr/sbin is often not on an unprivileged user's PATH.
		if _, err := os.Stat("/usr/sbin/haproxy"); err == nil {
			return "/usr/sbin/haproxy"
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	ci := os.Getenv("CI") != ""
	if os.Geteuid() != 0 || (!ci && os.Getenv("THREEGS_E2E_INSTALL") != "1") {
		t.Skip("HAProxy is not installed: install it (apt-get install haproxy), or run this test as root with THREEGS_E2E_INSTALL=1 to let it install Debian's package itself (CI does)")
	}
	install := func(args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	pkg := []string{"install", "-y", "--no-install-recommends", "haproxy"}
	err := install(pkg...)
	if err != nil {
		// A new machine may have no package lists yet, or stale ones.
		if err = install("update"); err == nil {
			err = install(pkg...)
		}
	}
	p := find()
	if err == nil && p == "" {
		err = errors.New("apt-get installed haproxy, but no haproxy binary is on PATH or in /usr/sbin")
	}
	if err != nil {
		if ci {
			t.Fatalf("HAProxy could not be installed: %v", err)
		}
		t.Skipf("HAProxy could not be installed, so the load-balanced deployment is not tested: %v", err)
	}
	t.Logf("installed Debian's haproxy package: %s", p)
	return p
}

// haproxyConfig is deploy/haproxy/haproxy.cfg with the test's addresses in
// place of the example's: the balancer's own and the three followers'.
// Every example address must be there exactly once, so the example cannot
// drift from what this test runs without the test noticing. Without root,
// the lines that drop root's privileges are left out.
func haproxyConfig(t *testing.T, listen string, followers [3]string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixture.Root(), "deploy", "haproxy", "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(data)
	swap := func(from, to string) {
		if n := strings.Count(cfg, from); n != 1 {
			t.Fatalf("deploy/haproxy/haproxy.cfg names %s %d times; the test expects it once", from, n)
		}
		cfg = strings.Replace(cfg, from, to, 1)
	}
	swap("bind 127.0.0.1:8080\n", "bind "+listen+"\n")
	for i, addr := range followers {
		swap(fmt.Sprintf("server f%d 127.0.0.1:%d\n", i+1, 8081+i), fmt.Sprintf("server f%d %s\n", i+1, addr))
	}
	if os.Geteuid() != 0 {
		var kept []string
		for _, line := range strings.Split(cfg, "\n") {
			switch f := strings.Fields(line); {
			case len(f) == 2 && (f[0] == "chroot" || f[0] == "user" || f[0] == "group"):
				t.Logf("not root: leaving out %q", strings.TrimSpace(line))
			default:
				kept = append(kept, line)
			}
		}
		cfg = strings.Join(kept, "\n")
	}
	return cfg
}

// freeAddr is a loopback address nothing listens on now. Another process
// could take it before ours binds it; the test then fails at start, loudly.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// proc is a process the test started, its output going to a file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed once it has exited
}

// startProc runs bin with args, its stdout and stderr in dir/name.log. It
// is killed when the test ends, and its log, less routine lines, is shown
// if the test failed.
func startProc(t *testing.T, dir, name, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "### %s %s\n", bin, strings.Join(args, " "))
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("%s: %v", name, err)
	}
	go func() {
		p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("--- %s log (%s), routine lines left out:\n%s", name, p.log, notableLines(p.log, 150))
		}
	})
	return p
}

// kill ends the process with SIGKILL and waits for it.
func (p *proc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// exited says whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// logSize is how much the process has logged so far, for waitLog to read
// only what comes after it.
func (p *proc) logSize() int {
	fi, err := os.Stat(p.log)
	if err != nil {
		return 0
	}
	return int(fi.Size())
}

// waitLog polls the process's log, from byte from on, until re matches,
// and returns the submatches; it fails if the process exits first or
// nothing matches within timeout.
func (p *proc) waitLog(t *testing.T, re *regexp.Regexp, from int, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		data, _ := os.ReadFile(p.log)
		if from < len(data) {
			if m := re.FindStringSubmatch(string(data[from:])); m != nil {
				return m
			}
		}
		if p.exited() {
			t.Fatalf("%s exited before its log showed %q", p.name, re)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no log line matching %q within %s", p.name, re, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFor polls cond until it holds, failing after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEach checks every base every 100 ms until check passes for it, and
// returns how long after since each first passed. It gives up on a base at
// since+limit: that one's time is -1, and the test fails saying what check
// saw last.
func waitEach(t *testing.T, what string, bases []string, since time.Time, limit time.Duration, check func(base string) (bool, string)) []time.Duration {
	t.Helper()
	took := make([]time.Duration, len(bases))
	last := make([]string, len(bases))
	var wg sync.WaitGroup
	for i, base := range bases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ok, seen := check(base)
				now := time.Now()
				if ok {
					took[i] = now.Sub(since)
					return
				}
				if now.After(since.Add(limit)) {
					took[i], last[i] = -1, seen
					return
				}
				time.Sleep(100 * time.Millisecond) // the polling interval
			}
		}()
	}
	wg.Wait()
	for i, d := range took {
		if d < 0 {
			t.Errorf("%s: %s not within %s; last seen: %s", what, bases[i], limit, last[i])
		}
	}
	return took
}

// routineAccess matches a 3gs access log line for a request that went
// well.
var routineAccess = regexp.MustCompile(` msg=http .* status=(2\d\d|304) `)

// notableLines is the last max lines of a log that are not routine: a
// follower logs every answered call, which would bury what went wrong.
func notableLines(path string, max int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var keep []string
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if routineAccess.MatchString(line) {
			continue
		}
		keep = append(keep, line)
	}
	if len(keep) > max {
		keep = append([]string{fmt.Sprintf("(%d earlier lines left out)", len(keep)-max)}, keep[len(keep)-max:]...)
	}
	return strings.Join(keep, "\n")
}

// serving3gs matches the line 3gs serve logs once it listens.
var serving3gs = regexp.MustCompile(`msg="serving MCP over HTTP" url=http://(\S+)/mcp`)

// writeSessionSecret writes a fresh --session-secret-file: 32 random bytes
// as 64 hex characters, readable by the owner only.
func writeSessionSecret(t *testing.T, path string) {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	if err := os.WriteFile(path, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// serveFlags lists the flags `3gs serve --help` documents.
func serveFlags(t *testing.T, bin string) map[string]bool {
	t.Helper()
	out, _ := exec.Command(bin, "serve", "--help").CombinedOutput()
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+--([a-z0-9-]+)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	return flags
}

// Both protocol eras, as the load clients speak them.
const (
	era2025 = "2025-11-25"
	era2026 = "2026-07-28"
)

// toolCall is a tools/call request: its body and the headers it needs.
type toolCall struct {
	body    []byte
	headers map[string]string
}

// statelessCall is a 2026-07-28 tools/call: the version in _meta and in
// the header, and the method and tool name repeated in headers.
func statelessCall(id int, tool string, args any) toolCall {
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    era2026,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "3gs-deploy-test", "version": "1"},
		}},
	})
	return toolCall{body: body, headers: map[string]string{"MCP-Protocol-Version": era2026, "Mcp-Method": "tools/call", "Mcp-Name": tool}}
}

// sessionCall is a 2025-11-25 tools/call within session id.
func sessionCall(session string, id int, tool string, args any) toolCall {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	return toolCall{body: body, headers: map[string]string{"MCP-Protocol-Version": era2025, "Mcp-Session-Id": session}}
}

// answer is what one POST got.
type answer struct {
	status  int
	header  http.Header
	body    []byte
	replica string // the X-3gs-Replica header the balancer adds
	// err is a transport failure; cut says it came after the answer's
	// status line and headers, so that only its body was lost.
	err error
	cut bool
}

// post sends a JSON-RPC message to an MCP endpoint.
func post(ctx context.Context, c *http.Client, url string, call toolCall, token string) answer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(call.body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range call.headers {
		req.Header.Set(k, v)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header, replica: resp.Header.Get("X-3gs-Replica")}
	a.body, a.err = io.ReadAll(resp.Body)
	a.cut = a.err != nil
	return a
}

// result checks a tools/call answer: HTTP 200, the JSON-RPC result for
// id, not a tool error; it decodes structuredContent into out.
func (a answer) result(id int, out any) error {
	if a.err != nil {
		return a.err
	}
	if a.status != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.300s", a.status, a.body)
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(a.body, &msg); err != nil {
		return fmt.Errorf("not JSON-RPC: %v: %.300s", err, a.body)
	}
	if string(msg.ID) != strconv.Itoa(id) || msg.Result == nil || msg.Result.IsError {
		return fmt.Errorf("not a result for id %d: %.300s", id, a.body)
	}
	if out != nil {
		if err := json.Unmarshal(msg.Result.StructuredContent, out); err != nil {
			return fmt.Errorf("structuredContent: %v: %.300s", err, a.body)
		}
	}
	return nil
}

// openSession opens a 2025-11-25 session: initialize, then the
// notification that ends the handshake. It returns the session id, or
// the answer that failed and why.
func openSession(ctx context.Context, c *http.Client, url string) (string, answer, error) {
	init := toolCall{body: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + era2025 +
		`","capabilities":{},"clientInfo":{"name":"3gs-deploy-test","version":"1"}}}`)}
	a := post(ctx, c, url, init, "")
	if a.err != nil {
		return "", a, fmt.Errorf("initialize: %w", a.err)
	}
	id := a.header.Get("Mcp-Session-Id")
	if a.status != http.StatusOK || id == "" || !bytes.Contains(a.body, []byte(`"result"`)) {
		return "", a, fmt.Errorf("initialize: HTTP %d, session %q: %.300s", a.status, id, a.body)
	}
	note := toolCall{body: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), headers: map[string]string{"MCP-Protocol-Version": era2025, "Mcp-Session-Id": id}}
	if a := post(ctx, c, url, note, ""); a.err != nil || a.status != http.StatusAccepted {
		return "", a, fmt.Errorf("notifications/initialized: HTTP %d %v: %.300s", a.status, a.err, a.body)
	}
	return id, answer{}, nil
}

// sourcesAnswer is the part of get_sources' answer the test reads.
type sourcesAnswer struct {
	Slug            string `json:"slug"`
	RegistryVersion string `json:"registry_version"`
}

// health is the part of /health the test reads.
type health struct {
	Status   string `json:"status"`
	Registry *struct {
		Version string `json:"version"`
		SHA256  string `json:"sha256"`
	} `json:"registry"`
	Follow *struct {
		Origin    string `json:"origin"`
		Status    string `json:"status"`
		Version   string `json:"version"`
		Reason    string `json:"reason"`
		LastCheck string `json:"last_check"`
	} `json:"follow"`
}

// getHealth reads a node's /health.
func getHealth(c *http.Client, base string) (health, error) {
	var h health
	resp, err := c.Get(base + "/health")
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return h, err
	}
	if resp.StatusCode != http.StatusOK {
		return h, fmt.Errorf("/health: HTTP %d: %.300s", resp.StatusCode, data)
	}
	return h, json.Unmarshal(data, &h)
}

// getBytes reads one URL's body, which must come with 200.
func getBytes(t *testing.T, c *http.Client, url string) []byte {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %v", url, resp.StatusCode, err)
	}
	return data
}

// fakeOrigin stands where the origin was, serving whatever registry and
// signature it is given at /registry and /registry.sig, as a compromised
// origin or a replaying mirror would.
type fakeOrigin struct {
	srv *http.Server
	mu  sync.Mutex
	reg []byte
	sig []byte
}

// startFakeOrigin listens on addr, polling until the port the killed
// origin held can be bound again.
func startFakeOrigin(t *testing.T, addr string, reg, sig []byte) *fakeOrigin {
	t.Helper()
	f := &fakeOrigin{reg: reg, sig: sig}
	var l net.Listener
	deadline := time.Now().Add(5 * time.Second)
	for {
		var err error
		if l, err = net.Listen("tcp", addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stand-in origin cannot listen on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		reg, sig := f.reg, f.sig
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/registry":
			w.Write(reg)
		case "/registry.sig":
			w.Write(sig)
		default:
			http.NotFound(w, r)
		}
	}), ReadHeaderTimeout: 5 * time.Second}
	go f.srv.Serve(l)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

// set changes what the stand-in serves from the next request on.
func (f *fakeOrigin) set(reg, sig []byte) {
	f.mu.Lock()
	f.reg, f.sig = reg, sig
	f.mu.Unlock()
}

// tally counts the load clients' requests and how each ended.
type tally struct {
	ok       atomic.Int64
	perEra   map[string]*atomic.Int64
	replicas map[string]*atomic.Int64 // answered, by X-3gs-Replica
	// lost: a request that got no correct answer although the balancer
	// could have retried it. cut: one whose answer began and then broke
	// off, which the balancer cannot retry.
	lost, cut atomic.Int64
	mu        sync.Mutex
	examples  []string
}

func newTally() *tally {
	t := &tally{perEra: map[string]*atomic.Int64{era2025: {}, era2026: {}}, replicas: map[string]*atomic.Int64{}}
	for _, r := range []string{"f1", "f2", "f3", "none"} {
		t.replicas[r] = &atomic.Int64{}
	}
	return t
}

func (t *tally) record(era string, a answer, err error) {
	switch {
	case err == nil:
		t.ok.Add(1)
		t.perEra[era].Add(1)
		r := t.replicas[a.replica]
		if r == nil {
			r = t.replicas["none"]
		}
		r.Add(1)
		return
	case a.cut:
		t.cut.Add(1)
	default:
		t.lost.Add(1)
	}
	t.mu.Lock()
	if len(t.examples) < 10 {
		t.examples = append(t.examples, fmt.Sprintf("%s %s (cut %v): %v", time.Now().Format("15:04:05.000"), era, a.cut, err))
	}
	t.mu.Unlock()
}

// served is how many answers each follower had given.
func (t *tally) served() map[string]int64 {
	m := map[string]int64{}
	for r, n := range t.replicas {
		m[r] = n.Load()
	}
	return m
}

// loadQuery is asked by every load client: the starter registry of
// 3gs init answers it with its one category.
const (
	loadQuery = "what is the model context protocol"
	loadSlug  = "curating-with-3gs"
)

// runClient calls get_sources through the balancer until stop closes, in
// one era: 2026-07-28 calls carry no session; a 2025-11-25 client opens
// one session and uses it for every call, wherever the balancer sends it.
func runClient(c *http.Client, url, era string, stop <-chan struct{}, t *tally) {
	ctx := context.Background()
	session := ""
	args := map[string]any{"query": loadQuery}
	for id := 1; ; id++ {
		select {
		case <-stop:
			return
		default:
		}
		var call toolCall
		if era == era2026 {
			call = statelessCall(id, "get_sources", args)
		} else {
			if session == "" {
				s, a, err := openSession(ctx, c, url)
				if err != nil {
					t.record(era, a, err)
					continue
				}
				session = s
			}
			call = sessionCall(session, id, "get_sources", args)
		}
		a := post(ctx, c, url, call, "")
		var got sourcesAnswer
		err := a.result(id, &got)
		if err == nil && got.Slug != loadSlug {
			err = fmt.Errorf("answered %q, want %q: %.300s", got.Slug, loadSlug, a.body)
		}
		t.record(era, a, err)
	}
}

// haproxyLogLine picks from a line of HAProxy's HTTP log (option httplog)
// the status, the termination state and the retries field: a count of
// retries, with a "+" when the request was redispatched to another server.
var haproxyLogLine = regexp.MustCompile(`\] \S+ \S+ \S+ (-?\d+) \S+ \S+ \S+ (\S{4}) \d+/\d+/\d+/\d+/(\+?)(\d+) \d+/\d+ "`)

// haproxyRetries counts, in the part of HAProxy's log from byte from on,
// the requests it retried (and redispatched to another follower), those
// it answered with a 5xx of its own or not at all (failed), and those that
// ended abnormally in any way (abnormal: the termination state is not
// "----", which includes an answer cut short after its headers).
func haproxyRetries(p *proc, from int) (retried, redispatched, failed, abnormal int) {
	data, _ := os.ReadFile(p.log)
	if from > len(data) {
		return
	}
	for _, m := range haproxyLogLine.FindAllStringSubmatch(string(data[from:]), -1) {
		if m[4] != "0" || m[3] == "+" {
			retried++
		}
		if m[3] == "+" {
			redispatched++
		}
		if status, _ := strconv.Atoi(m[1]); status >= 500 || status < 0 {
			failed++
		}
		if m[2] != "----" {
			abnormal++
		}
	}
	return
}
