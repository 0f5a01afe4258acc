package httpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"

	"github.com/three-good-sources/3gs/internal/httpserver"
)

// Whatever a client names (method, tool, path) reaches the access log
// shortened: a megabyte method must not cost a megabyte of log.
func TestAccessLogBoundsClientStrings(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	huge := strings.Repeat("m", 1<<20)
	h.post(`{"jsonrpc":"2.0","id":1,"method":"` + huge + `"}`)
	body, headers := call(2, huge, `{}`)
	h.post(body, headers...)
	h.do(http.MethodGet, "/"+huge[:60<<10], "")
	h.ts.Close() // waits for every handler, and so every log line, to finish
	lines := strings.Split(strings.TrimSpace(h.logs.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("%d log lines, want one per request:\n%.2000s", len(lines), h.logs.String())
	}
	for _, l := range lines {
		if len(l) > 1024 {
			t.Errorf("a log line of %d bytes: %.300s…", len(l), l)
		}
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &v); err != nil || !strings.HasPrefix(v["rpc"].(string), "mmmm") || !strings.HasSuffix(v["rpc"].(string), "…") {
		t.Errorf("the method is not logged in short: %v", v)
	}
}

// Answers on /mcp are per caller and per moment; no cache may keep one,
// whatever the status.
func TestMCPAnswersAreNotCached(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	body, headers := call(1, "list_categories", `{}`)
	for name, r := range map[string]reply{
		"a tool call":  h.post(body, headers...),
		"a bad body":   h.post(`{`),
		"a notice":     h.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		"a wrong verb": h.do(http.MethodGet, "/mcp", ""),
	} {
		if got := r.header.Values("Cache-Control"); len(got) != 1 || got[0] != "no-store" {
			t.Errorf("%s (%d): Cache-Control %q, want no-store", name, r.status, got)
		}
	}
}

// Only the Bearer scheme carries a token. A bare token, or one under
// another scheme, is not accepted; two Authorization headers are refused,
// since a proxy may check one and we would read the other.
func TestAuthorizationIsBearerOnly(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	body, headers := modern(1, "tools/list", "")
	list := func(extra ...string) (int, reply) {
		r := h.post(body, append(append([]string{}, headers...), extra...)...)
		var v struct {
			Result struct {
				Tools []struct{ Name string } `json:"tools"`
			} `json:"result"`
		}
		json.Unmarshal(r.body, &v)
		return len(v.Result.Tools), r
	}
	public, _ := list()
	admin, _ := list("Authorization", "Bearer "+h.admin)
	if admin <= public {
		t.Fatalf("admin lists %d tools, public %d", admin, public)
	}
	for _, header := range []string{h.admin, "Token " + h.admin, "Basic " + h.admin, "Bearer" + h.admin} {
		if n, r := list("Authorization", header); n != public {
			t.Errorf("Authorization: %.12s…: %d tools (%d %s), want the %d public ones", header, n, r.status, r.body, public)
		}
	}
	if n, _ := list("Authorization", "BEARER "+h.admin); n != admin {
		t.Errorf("the scheme's name is case-insensitive: %d tools", n)
	}
	n, r := list("Authorization", "Bearer "+h.admin, "Authorization", "Bearer "+h.user)
	code, msg := r.rpcError()
	if n != 0 || r.status != http.StatusBadRequest || code != -32600 || !strings.Contains(msg, "2 Authorization headers") {
		t.Errorf("two Authorization headers: %d %s", r.status, r.body)
	}
}

// serve runs the harness's server on a real loopback listener (so
// connection handling is the production one) until the test ends.
func (h *harness) serve(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// dialAll opens n raw connections and sends each prefix; they stay open
// until the test ends.
func dialAll(t *testing.T, base string, n int, prefix string) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatalf("dial %d: %v", len(conns), err)
		}
		if prefix != "" {
			if _, err := c.Write([]byte(prefix)); err != nil {
				t.Fatal(err)
			}
		}
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns
}

// holdRequests starts n requests on connections of their own that stay
// running (get_sources "block") until the returned function releases
// them. It is also run when the test ends, so a failing test still lets
// Serve drain.
func (h *harness) holdRequests(t *testing.T, base string, n int) (release func()) {
	t.Helper()
	body, headers := call(1, "get_sources", `{"query":"block"}`)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json")
			for i := 0; i+1 < len(headers); i += 2 {
				req.Header.Set(headers[i], headers[i+1])
			}
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	for range n {
		<-h.tools.entered
	}
	release = sync.OnceFunc(func() { close(h.tools.release); wg.Wait() })
	t.Cleanup(release)
	return release
}

// fresh sends one tool call on a new connection. The client timeout only
// turns a hang into a failure; nothing is measured against it.
func fresh(t *testing.T, base string) (int, []byte) {
	t.Helper()
	body, headers := call(99, "list_categories", `{}`)
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("a well-behaved client got no answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func health(t *testing.T, base string) gen.Health {
	t.Helper()
	resp, err := http.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v gen.Health
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.Load == nil {
		t.Fatalf("/health: %v %+v", err, v)
	}
	return v
}

// Bodies that start and never finish used to hold every request slot
// (each took its slot before reading): every /mcp request got 503 while
// /health said 200. The body is now read before admission.
func TestSlowBodiesTakeNoSlot(t *testing.T) {
	h := newHarness(t, httpserver.Options{MaxConcurrent: 2})
	base := h.serve(t)
	stalled := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\""
	dialAll(t, base, 8, stalled)
	for i := range 3 {
		if status, body := fresh(t, base); status != http.StatusOK {
			t.Fatalf("request %d while 8 bodies stall, with --max-concurrent 2: %d %s", i, status, body)
		}
	}
	if l := health(t, base).Load; l.Requests != 0 || l.Saturated {
		t.Errorf("stalled bodies count as running requests: %+v", l)
	}
}

// /health reports saturation: with every slot held by a running request,
// load.saturated is true and requests equals its bound.
func TestHealthReportsSaturation(t *testing.T) {
	h := newHarness(t, httpserver.Options{MaxConcurrent: 2})
	base := h.serve(t)
	if l := health(t, base).Load; l.Saturated || l.MaxRequests != 2 || l.MaxConnections != httpserver.DefaultMaxConnections {
		t.Fatalf("an idle server: %+v", l)
	}
	release := h.holdRequests(t, base, 2)
	l := health(t, base).Load
	release()
	if !l.Saturated || l.Requests != 2 {
		t.Errorf("both slots held: %+v, want saturated", l)
	}
}

// A flood of idle connections, or of connections that never finish their
// headers, used to exhaust file descriptors and hang every new client. At
// --max-connections the connection waiting longest without a request makes
// way, so a well-behaved client is always served.
func TestConnectionFlood(t *testing.T) {
	for name, prefix := range map[string]string{
		"idle":      "",
		"slowloris": "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, httpserver.Options{MaxConnections: 16})
			base := h.serve(t)
			dialAll(t, base, 200, prefix)
			for i := range 3 {
				if status, body := fresh(t, base); status != http.StatusOK {
					t.Fatalf("request %d after 200 %s connections: %d %s", i, name, status, body)
				}
			}
			if l := health(t, base).Load; l.Connections > 16 {
				t.Errorf("%d connections held, bound 16", l.Connections)
			}
		})
	}
}

// When every connection the server may hold is running a request, a new
// one is refused at once with 503 rather than left hanging.
func TestConnectionsAllBusy(t *testing.T) {
	h := newHarness(t, httpserver.Options{MaxConnections: 2})
	base := h.serve(t)
	release := h.holdRequests(t, base, 2)
	status, msg := fresh(t, base)
	release()
	if status != http.StatusServiceUnavailable || !strings.Contains(string(msg), "--max-connections") {
		t.Fatalf("a third connection while two run requests: %d %s", status, msg)
	}
	if l := health(t, base).Load; l.ConnectionsRefused < 1 {
		t.Errorf("the refusal is not counted: %+v", l)
	}
}

// A flood of initialize calls from one address, with no DELETE, used to
// fill --max-sessions and refuse everyone for half an hour. Now it only
// recycles that address's own sessions, and a newcomer is always served.
func TestSessionFloodLocksNoOneOut(t *testing.T) {
	h := newHarness(t, httpserver.Options{MaxSessions: 64, MaxSessionsPerClient: 8})
	for i := range 300 {
		if r := h.post(initialize); r.status != http.StatusOK {
			t.Fatalf("initialize %d: %d %s", i, r.status, r.body)
		}
	}
	sid := h.open()
	if r := h.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Mcp-Session-Id", sid); r.status != http.StatusOK {
		t.Fatalf("the newest session: %d %s", r.status, r.body)
	}
	var v gen.Health
	json.Unmarshal(h.do(http.MethodGet, "/health", "").body, &v)
	if v.Load == nil || v.Load.Sessions != 8 || v.Load.SessionsEvicted != 293 {
		t.Errorf("after 301 sessions from one address, per-client bound 8: %+v", v.Load)
	}
}

// A body that stops arriving is answered 408 once the body deadline
// passes, and the connection is closed.
func TestStalledBodyTimesOut(t *testing.T) {
	h := newHarness(t, httpserver.Options{BodyTimeout: 50 * time.Millisecond})
	base := h.serve(t)
	c := dialAll(t, base, 1, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 1000\r\n\r\n{")[0]
	c.SetReadDeadline(time.Now().Add(20 * time.Second)) // turns a hang into a failure
	answer, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	if !strings.HasPrefix(string(answer), "HTTP/1.1 408 ") || !strings.Contains(string(answer), "did not arrive within 50ms") || !strings.Contains(string(answer), "Connection: close") {
		t.Errorf("a stalled body: %q", answer)
	}
}

// Bodies are read before admission, so their memory is bounded by a
// budget (--max-concurrent × --max-message-bytes) rather than by the
// request places. Each body being read takes 64 KiB of it as its bytes
// arrive; with the budget taken, a newcomer is told the server is busy,
// and once the stalled bodies go it is served.
func TestBodyBudget(t *testing.T) {
	h := newHarness(t, httpserver.Options{MaxConcurrent: 1, MaxMessageBytes: 64 << 10})
	base := h.serve(t)
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 60000\r\n\r\n{"
	stalled := dialAll(t, base, 2, head)
	l := health(t, base).Load
	for i := 0; l.BodyBytes < l.MaxBodyBytes; i++ { // until the server has started reading both
		if i == 1000 {
			t.Fatalf("the stalled bodies never took the budget: %+v", l)
		}
		time.Sleep(10 * time.Millisecond)
		l = health(t, base).Load
	}
	if l.MaxBodyBytes != 128<<10 || !l.Saturated {
		t.Errorf("budget of 2 × 64 KiB held: %+v", l)
	}
	if status, body := fresh(t, base); status != http.StatusServiceUnavailable || !strings.Contains(string(body), "bodies of other requests") {
		t.Fatalf("with the body budget held: %d %s", status, body)
	}
	for _, c := range stalled {
		c.Close()
	}
	for i := 0; l.BodyBytes > 0; i++ {
		if i == 1000 {
			t.Fatalf("the budget was not given back: %+v", l)
		}
		time.Sleep(10 * time.Millisecond)
		l = health(t, base).Load
	}
	if status, body := fresh(t, base); status != http.StatusOK {
		t.Fatalf("once the stalled bodies are gone: %d %s", status, body)
	}
}
