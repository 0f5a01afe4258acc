package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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

	"github.com/three-good-sources/3gs/internal/testkit"
)

// This file holds what TestLoadBalancedFollowers needs besides its story:
// HAProxy (found or installed), processes whose output goes to files, MCP
// calls in both protocol eras, a stand-in origin, and the load clients.

// haproxyConfig is deploy/haproxy/haproxy.cfg with the test's addresses in
// place of the example's: the balancer's own and the three followers'.
// Every example address must be there exactly once, so the example cannot
// drift from what this test runs without the test noticing. Without root,
// the lines that drop root's privileges are left out.
func haproxyConfig(t *testing.T, listen string, followers [3]string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testkit.Root(), "deploy", "haproxy", "haproxy.cfg"))
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
	era2026 = testkit.Stateless
)

// toolCall is a tools/call request: its body and the headers it needs.
type toolCall struct {
	body    []byte
	headers map[string]string
}

// statelessCall is a 2026-07-28 tools/call: the version in _meta and in
// the header, and the method and tool name repeated in headers.
func statelessCall(id int, tool string, args any) toolCall {
	body, headers := testkit.StatelessRequest(id, "tools/call", map[string]any{"name": tool, "arguments": args})
	return toolCall{body: body, headers: headers}
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

// getHealth reads a node's /health, which must come with 200.
func getHealth(c *http.Client, base string) (health, error) {
	var h health
	status, data, err := getJSON(c, base+"/health", &h)
	if status != 0 && status != http.StatusOK {
		err = fmt.Errorf("/health: HTTP %d: %.300s", status, data)
	}
	return h, err
}

// getJSON reads url and decodes its body into out, whatever the status;
// it returns the status (0 when nothing came back) and the body.
func getJSON(c *http.Client, url string, out any) (int, []byte, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, data, err
	}
	return resp.StatusCode, data, json.Unmarshal(data, out)
}

// getBytes reads one URL's body, which must come with 200.
func getBytes(t *testing.T, c *http.Client, url string) []byte {
	t.Helper()
	status, data := get(t, c, url)
	if status != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d", url, status)
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
		testkit.ServeRegistry(w, r, reg, sig)
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
func haproxyRetries(p *testkit.Proc, from int) (retried, redispatched, failed, abnormal int) {
	data, _ := os.ReadFile(p.Log)
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
