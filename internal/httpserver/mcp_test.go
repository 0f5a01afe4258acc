package httpserver_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/mcp"
)

// TestStatusCodes walks every status the MCP endpoint answers with.
func TestStatusCodes(t *testing.T) {
	h := newHarness(t, httpserver.Options{MaxMessageBytes: 2048})
	sid := h.open()
	okList, okHeaders := modern(7, "tools/list", "")
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`
	cases := []struct {
		name    string
		method  string
		body    string
		headers []string
		status  int
		code    int // JSON-RPC error code expected in the body; 0 for none
	}{
		{"legacy request in a session", "POST", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, []string{"Mcp-Session-Id", sid}, 200, 0},
		{"modern request, no session", "POST", okList, okHeaders, 200, 0},
		{"notification", "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, []string{"Mcp-Session-Id", sid}, 202, 0},
		{"notification without a session", "POST", `{"jsonrpc":"2.0","method":"notifications/whatever"}`, nil, 202, 0},
		{"a client's response", "POST", `{"jsonrpc":"2.0","id":5,"result":{}}`, nil, 202, 0},
		{"Accept without JSON", "POST", okList, append(okHeaders, "Accept", "-", "Accept", "text/event-stream"), 406, -32600},
		{"no Accept", "POST", okList, append(okHeaders, "Accept", "-"), 406, -32600},
		{"Accept JSON with q=0", "POST", okList, append(okHeaders, "Accept", "-", "Accept", "application/json;q=0, text/html"), 406, -32600},
		{"Accept */*", "POST", okList, append(okHeaders, "Accept", "-", "Accept", "*/*"), 200, 0},
		{"Content-Type not JSON", "POST", okList, append(okHeaders, "Content-Type", "-", "Content-Type", "text/plain"), 415, -32600},
		{"Content-Type JSON in Latin-1", "POST", okList, append(okHeaders, "Content-Type", "-", "Content-Type", "application/json; charset=iso-8859-1"), 415, -32600},
		{"bad JSON", "POST", `{"jsonrpc":"2.0",`, nil, 400, -32700},
		{"batch", "POST", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, 400, -32600},
		{"not an object", "POST", `42`, nil, 400, -32600},
		{"invalid UTF-8", "POST", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}", nil, 400, -32700},
		{"body over the limit", "POST", big, []string{"Mcp-Session-Id", sid}, 413, -32600},
		{"legacy request without a session", "POST", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, nil, 400, -32600},
		{"unknown session", "POST", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, []string{"Mcp-Session-Id", "nope"}, 404, -32600},
		{"notification for an unknown session", "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, []string{"Mcp-Session-Id", "nope"}, 404, -32600},
		{"GET", "GET", "", nil, 405, -32600},
		{"PUT", "PUT", "", nil, 405, -32600},
		{"DELETE without a session", "DELETE", "", nil, 400, -32600},
		{"DELETE an unknown session", "DELETE", "", []string{"Mcp-Session-Id", "nope"}, 404, -32600},
		{"unknown endpoint", "GET", "", nil, 404, 0},
		{"params whose _meta is not an object", "POST", `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":[]}}`, nil, 400, -32602},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := "/mcp"
			if c.name == "unknown endpoint" {
				path = "/elsewhere"
			}
			r := h.do(c.method, path, c.body, c.headers...)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			code, msg := r.rpcError()
			if code != c.code {
				t.Errorf("JSON-RPC error %d %q, want %d", code, msg, c.code)
			}
			if c.status == 202 && len(r.body) != 0 {
				t.Errorf("202 with a body: %s", r.body)
			}
			if c.status == 405 && path == "/mcp" && r.header.Get("Allow") != "POST, DELETE" {
				t.Errorf("405 without Allow: POST, DELETE: %q", r.header.Get("Allow"))
			}
			if ct := r.header.Get("Content-Type"); len(r.body) > 0 && ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// TestBodyLimitBoundary: a body of exactly the limit is read; one byte
// more is refused, whether or not Content-Length announces it.
func TestBodyLimitBoundary(t *testing.T) {
	const limit = 1024
	h := newHarness(t, httpserver.Options{MaxMessageBytes: limit})
	body, headers := modern(1, "tools/list", `"pad":"`)
	body = strings.Replace(body, `"pad":"`, `"pad":"`+strings.Repeat("x", limit-len(body)-1)+`"`, 1)
	if len(body) != limit {
		t.Fatalf("test body is %d bytes, want %d", len(body), limit)
	}
	if r := h.post(body, headers...); r.status != 200 {
		t.Fatalf("a body of exactly the limit: %d %s", r.status, r.body)
	}
	over := strings.Replace(body, `"pad":"`, `"pad":"x`, 1)
	if r := h.post(over, headers...); r.status != 413 {
		t.Fatalf("one byte over: %d %s", r.status, r.body)
	}
	// Without Content-Length (chunked), the limit holds while reading.
	req, _ := http.NewRequest("POST", h.ts.URL+"/mcp", struct{ *strings.Reader }{strings.NewReader(over)})
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.ContentLength = -1
	resp, err := h.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 || len(resp.TransferEncoding) != 0 && resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("chunked, one byte over: %d", resp.StatusCode)
	}
}

// TestSessionLifecycle: initialize opens, DELETE ends, an ended id is 404,
// an idle one expires, and the number open is bounded.
func TestSessionLifecycle(t *testing.T) {
	h := newHarness(t, httpserver.Options{MaxSessions: 2, SessionIdle: time.Minute})
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	a := h.open()
	if len(a) < 32 || strings.IndexFunc(a, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		t.Fatalf("session id %q is not long visible ASCII", a)
	}
	b := h.open()
	if a == b {
		t.Fatal("two sessions share an id")
	}
	if r := h.post(list, "Mcp-Session-Id", a); r.status != 200 {
		t.Fatalf("session a: %d %s", r.status, r.body)
	}
	// The table is full: a third session takes the place of the one used
	// longest ago (b), which then gets 404 and initializes again.
	x := h.open()
	if r := h.post(list, "Mcp-Session-Id", b); r.status != 404 || !strings.Contains(string(r.body), "made way for newer sessions") {
		t.Fatalf("b, least recently used when the table filled: %d %s", r.status, r.body)
	}
	if r := h.do("DELETE", "/mcp", "", "Mcp-Session-Id", x); r.status != 204 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	if r := h.post(list, "Mcp-Session-Id", x); r.status != 404 {
		t.Fatalf("an ended session: %d %s", r.status, r.body)
	}
	if r := h.do("DELETE", "/mcp", "", "Mcp-Session-Id", x); r.status != 404 {
		t.Fatalf("DELETE twice: %d", r.status)
	}
	b = a
	c := h.open() // x's place is free again

	// b stays in use; c sits idle past the timeout.
	h.clock.Advance(40 * time.Second)
	if r := h.post(list, "Mcp-Session-Id", b); r.status != 200 {
		t.Fatalf("b in use: %d", r.status)
	}
	h.clock.Advance(40 * time.Second)
	if r := h.post(list, "Mcp-Session-Id", c); r.status != 404 {
		t.Fatalf("c idle for 80s with a 1m timeout: %d %s", r.status, r.body)
	}
	if r := h.post(list, "Mcp-Session-Id", b); r.status != 200 {
		t.Fatalf("b used 40s ago: %d", r.status)
	}
	// The table is full with b and an expired session no one asked about:
	// initialize ends the idle one to make room.
	d := h.open()
	h.clock.Advance(61 * time.Second)
	h.open()
	if r := h.post(list, "Mcp-Session-Id", d); r.status != 404 {
		t.Fatalf("d after its idle timeout: %d", r.status)
	}
}

// TestProtocolVersionHeader covers both eras' version header rules.
func TestProtocolVersionHeader(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	sid := h.open() // negotiates 2025-11-25
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	legacy := []struct {
		header string
		status int
	}{
		{"", 200},           // absent: accepted
		{"2025-11-25", 200}, // the negotiated version
		{"2025-03-26", 200}, // what absence means, said out loud
		{"2025-06-18", 400}, // supported, but not this session's
		{"2026-07-28", 400},
		{"banana", 400},
	}
	for _, c := range legacy {
		headers := []string{"Mcp-Session-Id", sid}
		if c.header != "" {
			headers = append(headers, "MCP-Protocol-Version", c.header)
		}
		if r := h.post(list, headers...); r.status != c.status {
			t.Errorf("legacy, header %q: %d, want %d: %s", c.header, r.status, c.status, r.body)
		}
	}
	if r := h.post(initialize, "MCP-Protocol-Version", "1999-01-01"); r.status != 400 {
		t.Errorf("initialize with an unknown version header: %d", r.status)
	}

	body, headers := modern(3, "tools/list", "")
	without := func(name string) []string {
		var out []string
		for i := 0; i < len(headers); i += 2 {
			if headers[i] != name {
				out = append(out, headers[i], headers[i+1])
			}
		}
		return out
	}
	callBody, callHeaders := call(4, "get_sources", `{"query":"learn rust"}`)
	unsupported := strings.ReplaceAll(body, "2026-07-28", "2027-01-01")
	noCaps := strings.Replace(body, `,"io.modelcontextprotocol/clientCapabilities":{}`, "", 1)
	unknown, unknownHeaders := modern(5, "resources/list", "")
	cases := []struct {
		name    string
		body    string
		headers []string
		status  int
		code    int
	}{
		{"all headers", body, headers, 200, 0},
		{"no version header", body, without("MCP-Protocol-Version"), 400, -32020},
		{"version header differs from _meta", body, append(without("MCP-Protocol-Version"), "MCP-Protocol-Version", "2025-11-25"), 400, -32020},
		{"version header twice", body, append(headers, "MCP-Protocol-Version", "2026-07-28"), 400, -32020},
		{"no Mcp-Method", body, without("Mcp-Method"), 400, -32020},
		{"Mcp-Method differs", body, append(without("Mcp-Method"), "Mcp-Method", "tools/call"), 400, -32020},
		{"Mcp-Method in another case", body, append(without("Mcp-Method"), "Mcp-Method", "Tools/List"), 400, -32020},
		{"tools/call with Mcp-Name", callBody, callHeaders, 200, 0},
		{"tools/call without Mcp-Name", callBody, headers[:0:0], 400, -32020},
		{"tools/call, Mcp-Name differs", callBody, append(callHeaders[:4:4], "Mcp-Method", "tools/call", "Mcp-Name", "get_provenance"), 400, -32020},
		{"tools/call, Mcp-Name in base64", callBody, append(callHeaders[:4:4], "Mcp-Method", "tools/call", "Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte("get_sources"))+"?="), 200, 0},
		{"tools/call, Mcp-Name bad base64", callBody, append(callHeaders[:4:4], "Mcp-Method", "tools/call", "Mcp-Name", "=?base64?***?="), 400, -32020},
		{"unsupported version", unsupported, append(without("MCP-Protocol-Version"), "MCP-Protocol-Version", "2027-01-01"), 400, -32022},
		{"no clientCapabilities", noCaps, headers, 400, -32602},
		{"unknown method", unknown, unknownHeaders, 404, -32601},
		{"a session id is ignored", body, append(headers, "Mcp-Session-Id", "whatever"), 200, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := c.headers
			if c.name == "tools/call without Mcp-Name" {
				hs = []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call"}
			}
			if strings.HasPrefix(c.name, "tools/call, Mcp-Name") {
				hs = append([]string{"MCP-Protocol-Version", "2026-07-28"}, c.headers[4:]...)
			}
			r := h.post(c.body, hs...)
			code, msg := r.rpcError()
			if r.status != c.status || code != c.code {
				t.Fatalf("%d %d %q, want %d %d", r.status, code, msg, c.status, c.code)
			}
			if code != 0 && !strings.Contains(string(r.body), `"id":`) {
				t.Errorf("error without the request's id: %s", r.body)
			}
		})
	}
}

// TestOrigin: absent and loopback origins pass, others get 403 on every
// endpoint; --allow-origin adds origins; a foreign Host is refused on a
// loopback server.
func TestOrigin(t *testing.T) {
	h := newHarness(t, httpserver.Options{AllowOrigins: []string{"https://app.example.com"}})
	body, headers := modern(1, "tools/list", "")
	cases := []struct {
		name   string
		extra  []string
		status int
	}{
		{"no Origin", nil, 200},
		{"loopback origin, other port", []string{"Origin", "http://localhost:6274"}, 200},
		{"loopback IP origin", []string{"Origin", "http://127.0.0.1:5173"}, 200},
		{"IPv6 loopback origin", []string{"Origin", "http://[::1]:8080"}, 200},
		{"allowed origin", []string{"Origin", "https://app.example.com"}, 200},
		{"allowed origin, default port spelled out", []string{"Origin", "https://APP.example.com:443"}, 200},
		{"allowed host, other scheme", []string{"Origin", "http://app.example.com"}, 403},
		{"foreign origin", []string{"Origin", "http://evil.example"}, 403},
		{"rebinding: foreign Host and Origin", []string{"Host", "evil.example:3000", "Origin", "http://evil.example:3000"}, 403},
		{"foreign Host, no Origin", []string{"Host", "evil.example"}, 403},
		{"null origin", []string{"Origin", "null"}, 403},
		{"empty origin", []string{"Origin", ""}, 403},
		{"two origins", []string{"Origin", "http://localhost", "Origin", "http://evil.example"}, 403},
		{"loopback origin to a foreign Host", []string{"Host", "evil.example", "Origin", "http://localhost"}, 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.post(body, append(append([]string{}, headers...), c.extra...)...)
			if r.status != c.status {
				t.Fatalf("POST /mcp: %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.status == 403 {
				if code, _ := r.rpcError(); code != -32600 {
					t.Errorf("403 without a JSON-RPC error body: %s", r.body)
				}
				for _, path := range []string{"/health", "/registry"} {
					if r := h.do("GET", path, "", c.extra...); r.status != 403 {
						t.Errorf("GET %s: %d, want 403", path, r.status)
					}
				}
			}
		})
	}
	// A server bound beyond loopback with no host list takes any Host,
	// still checking Origin.
	open := newHarness(t, httpserver.Options{Hosts: []string{}})
	if r := open.post(body, append(headers, "Host", "mcp.example.org")...); r.status != 200 {
		t.Errorf("any Host without a host list: %d", r.status)
	}
	if r := open.post(body, append(headers, "Host", "mcp.example.org", "Origin", "https://evil.example")...); r.status != 403 {
		t.Errorf("foreign Origin without a host list: %d", r.status)
	}
}

// TestBearerToken: the Authorization header picks the tier, and a bad
// token lists the public tools as on stdio.
func TestBearerToken(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	body, headers := modern(1, "tools/list", "")
	count := func(extra ...string) (int, string) {
		r := h.post(body, append(append([]string{}, headers...), extra...)...)
		var v struct {
			Result struct {
				Tools      []struct{ Name string } `json:"tools"`
				CacheScope string                  `json:"cacheScope"`
			} `json:"result"`
		}
		if err := json.Unmarshal(r.body, &v); err != nil || r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		return len(v.Result.Tools), v.Result.CacheScope
	}
	public, scope := count()
	if scope != "public" {
		t.Errorf("anonymous list cached %q", scope)
	}
	if n, _ := count("Authorization", "Bearer wrong"); n != public {
		t.Errorf("a bad token lists %d tools, the public list has %d", n, public)
	}
	if n, _ := count("Authorization", "Basic dXNlcjpwYXNz"); n != public {
		t.Errorf("another scheme lists %d tools", n)
	}
	admin, scope := count("Authorization", "Bearer "+h.admin)
	if admin <= public || scope != "private" {
		t.Errorf("admin lists %d tools (%s), public %d", admin, scope, public)
	}
	if n, _ := count("Authorization", "bearer "+h.admin); n != admin {
		t.Errorf("the scheme is case-insensitive (RFC 9110): %d", n)
	}
	c, ch := call(2, "explain_match", `{"query":"rust"}`)
	if r := h.post(c, ch...); func() bool { code, _ := r.rpcError(); return code != -31001 }() {
		t.Errorf("explain_match without a token: %s", r.body)
	}
	if r := h.post(c, append(ch, "Authorization", "Bearer "+h.user)...); strings.Contains(string(r.body), `"error"`) {
		t.Errorf("explain_match with a user token: %s", r.body)
	}
	if strings.Contains(h.logs.String(), h.admin) || strings.Contains(h.logs.String(), h.user) {
		t.Error("a token reached the log")
	}
}

// TestConcurrencyLimit: with every slot held, one more request gets 503
// with Retry-After, and once a slot frees it is served.
func TestConcurrencyLimit(t *testing.T) {
	h := newHarness(t, httpserver.Options{MaxConcurrent: 2})
	block, bh := call(1, "get_sources", `{"query":"block"}`)
	done := make(chan reply, 2)
	for range 2 {
		go func() { done <- h.post(block, bh...) }()
	}
	<-h.tools.entered
	<-h.tools.entered
	list, lh := modern(2, "tools/list", "")
	r := h.post(list, lh...)
	if r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("third request with 2 slots held: %d %v", r.status, r.header)
	}
	if r := h.do("GET", "/health", ""); r.status != 200 {
		t.Errorf("/health is not limited: %d", r.status)
	}
	h.tools.release <- struct{}{}
	if r := <-done; r.status != 200 {
		t.Fatalf("released request: %d %s", r.status, r.body)
	}
	if r := h.post(list, lh...); r.status != 200 {
		t.Fatalf("after a slot freed: %d", r.status)
	}
	h.tools.release <- struct{}{}
	<-done
}

// TestCancellation: notifications/cancelled in a legacy session stops the
// named request, which then gets no answer.
func TestCancellation(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	sid := h.open()
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("POST", h.ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"get_sources","arguments":{"query":"block"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Mcp-Session-Id", sid)
		resp, err := h.ts.Client().Do(req)
		if err == nil {
			resp.Body.Close()
			err = &unexpected{resp.StatusCode}
		}
		done <- err
	}()
	<-h.tools.entered
	r := h.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"user"}}`, "Mcp-Session-Id", sid)
	if r.status != 202 {
		t.Fatalf("cancel: %d", r.status)
	}
	if err := <-done; err == nil {
		t.Fatal("no error")
	} else if u, ok := err.(*unexpected); ok {
		t.Fatalf("the cancelled request was answered with %d", u.status)
	}
	// The session goes on.
	if r := h.post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`, "Mcp-Session-Id", sid); r.status != 200 {
		t.Fatalf("after a cancel: %d", r.status)
	}
}

type unexpected struct{ status int }

func (u *unexpected) Error() string { return "answered" }

// TestPanicIsolated: a handler panic is an Internal error for that request
// and the server goes on.
func TestPanicIsolated(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	body, headers := call(1, "get_sources", `{"query":"panic"}`)
	r := h.post(body, headers...)
	if code, msg := r.rpcError(); r.status != 500 || code != -32603 || msg != "Internal error" || strings.Contains(string(r.body), "goroutine") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if !strings.Contains(h.logs.String(), "a handler bug") {
		t.Error("the panic is not logged")
	}
	ok, oh := call(2, "get_sources", `{"query":"learn rust"}`)
	if r := h.post(ok, oh...); r.status != 200 {
		t.Fatalf("after a panic: %d", r.status)
	}
}

// TestAccessLog: one line per request with what was asked and how it went.
func TestAccessLog(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	body, headers := call(1, "get_sources", `{"query":"learn rust"}`)
	h.post(body, append(headers, "Authorization", "Bearer "+h.admin)...)
	var line struct {
		Msg, Method, Path, RPC, Tool string
		Status                       int
		Duration                     float64
	}
	for _, l := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
		if strings.Contains(l, `"msg":"http"`) {
			json.Unmarshal([]byte(l), &line)
		}
	}
	if line.Method != "POST" || line.Path != "/mcp" || line.RPC != "tools/call" || line.Tool != "get_sources" || line.Status != 200 || line.Duration <= 0 {
		t.Errorf("access log line: %+v\n%s", line, h.logs.String())
	}
	if strings.Contains(h.logs.String(), h.admin) {
		t.Error("the token reached the log")
	}
}

// TestUnknownBearerToken: a bearer token the server does not accept gets
// the status a missing one gets, but a message saying the token is not
// recognised, and one log line that says why without the token.
func TestUnknownBearerToken(t *testing.T) {
	// An interval short enough that each failure gets its own line;
	// TestTokenWarningsRateLimited counts them in one.
	h := newHarness(t, httpserver.Options{TokenWarnEvery: time.Nanosecond})
	unknown, err := auth.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	c, ch := call(1, "explain_match", `{"query":"rust"}`)
	none := h.post(c, ch...)
	if code, msg := none.rpcError(); code != -31001 || !strings.HasPrefix(msg, "Authentication required: explain_match needs a token of tier user") || !strings.Contains(msg, "3gs token new --tier user") {
		t.Errorf("no token: %d %s", none.status, none.body)
	}
	if strings.Contains(h.logs.String(), "not recognised") {
		t.Errorf("a request without a token was logged as carrying one:\n%s", h.logs.String())
	}
	warnings := func() []map[string]any {
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
			var v map[string]any
			if json.Unmarshal([]byte(l), &v) == nil && v["level"] == "WARN" && strings.Contains(v["msg"].(string), "bearer token not recognised") {
				out = append(out, v)
			}
		}
		return out
	}
	for i, a := range []struct{ header, why string }{
		{"Bearer " + unknown, "no token in the tokens file matches it"},
		{"Basic dXNlcjpwYXNz", "not of the form Bearer TOKEN"},
	} {
		r := h.post(c, append(ch, "Authorization", a.header)...)
		code, msg := r.rpcError()
		if r.status != none.status || code != -31001 || !strings.HasPrefix(msg, "Token not recognised: ") {
			t.Errorf("%s: %d %s; want status %d, -31001, Token not recognised", a.header, r.status, r.body, none.status)
		}
		w := warnings()
		if len(w) != i+1 {
			t.Fatalf("%s: %d warnings in all, want %d:\n%s", a.header, len(w), i+1, h.logs.String())
		}
		if why, _ := w[i]["why"].(string); !strings.Contains(why, a.why) || w[i]["rpc"] != "tools/call" || w[i]["remote"] == "" {
			t.Errorf("%s: warning %v, want why %q, the method and the remote address", a.header, w[i], a.why)
		}
	}
	if r := h.post(c, append(ch, "Authorization", "Bearer "+h.user)...); strings.Contains(string(r.body), `"error"`) || len(warnings()) != 2 {
		t.Errorf("a known token: %s; warnings %v", r.body, warnings())
	}
	if logs := h.logs.String(); strings.Contains(logs, unknown) || strings.Contains(logs, "dXNlcjpwYXNz") || strings.Contains(logs, h.user) {
		t.Errorf("a token reached the log:\n%s", logs)
	}

	// A server started without a tokens file says so.
	bare := httpserver.New(httpserver.Options{Hosts: httpserver.LoopbackHosts, Log: slog.New(slog.NewJSONHandler(h.logs, nil))})
	bare.SetBackend(httpserver.Backend{MCP: mcp.NewServer(mcp.Config{Handlers: h.tools, Version: "test", Log: slog.New(slog.DiscardHandler)}), Published: h.tools.Published})
	ts := httptest.NewServer(bare.Handler())
	defer ts.Close()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(c))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(ch); i += 2 {
		req.Header.Set(ch[i], ch[i+1])
	}
	req.Header.Set("Authorization", "Bearer "+h.admin)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if w := warnings(); len(w) != 3 || !strings.Contains(w[2]["why"].(string), "without a tokens file (--tokens)") {
		t.Errorf("no tokens file: warnings %v", w)
	}
}

// get_sources needs exactly one of query or slug: over HTTP, in both eras,
// neither (however it is spelled) and both are answered 200 with a
// JSON-RPC -32602 naming the problem; a blank query is a result with
// isError.
func TestGetSourcesNeedsQueryOrSlug(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	session := h.open()
	cases := []struct{ name, args, want string }{
		{"empty arguments", `,"arguments":{}`, "got neither"},
		{"arguments null", `,"arguments":null`, "got neither"},
		{"arguments left out", ``, "got neither"},
		{"threshold alone", `,"arguments":{"threshold":0.5}`, "got neither"},
		{"both", `,"arguments":{"query":"learn rust","slug":"rust-learning"}`, "got both"},
		{"blank query", `,"arguments":{"query":"   "}`, ""},
	}
	for i, c := range cases {
		modernBody, modernHeaders := modern(i, "tools/call", `"name":"get_sources"`+c.args)
		legacy := `{"jsonrpc":"2.0","id":` + itoa(i) + `,"method":"tools/call","params":{"name":"get_sources"` + c.args + `}}`
		for era, r := range map[string]reply{
			"2026-07-28": h.post(modernBody, append(modernHeaders, "Mcp-Name", "get_sources")...),
			"2025-11-25": h.post(legacy, "Mcp-Session-Id", session, "MCP-Protocol-Version", "2025-11-25"),
		} {
			code, msg := r.rpcError()
			switch {
			case r.status != 200:
				t.Errorf("%s, %s: status %d %s", c.name, era, r.status, r.body)
			case c.want != "" && (code != -32602 || !strings.HasPrefix(msg, "Invalid params: arguments: needs exactly one of query or slug, "+c.want+": query searches by topic; slug names")):
				t.Errorf("%s, %s: %d %q, want -32602 saying %q", c.name, era, code, msg, c.want)
			case c.want == "" && (code != 0 || !strings.Contains(string(r.body), `"isError":true`)):
				t.Errorf("%s, %s: want a result with isError, got %s", c.name, era, r.body)
			}
		}
	}
}

// Many wrong tokens make a bounded number of warnings: the first at once,
// then one line per interval carrying how many failed in it; together they
// count every failure.
func TestTokenWarningsRateLimited(t *testing.T) {
	const every, n = 300 * time.Millisecond, 400
	h := newHarness(t, httpserver.Options{TokenWarnEvery: every})
	c, ch := call(1, "get_sources", `{"query":"rust"}`)
	start := time.Now()
	for i := range n {
		h.post(c, append(ch, "Authorization", fmt.Sprintf("Bearer wrong-%d", i))...)
	}
	sent := time.Since(start)
	type warning struct {
		Failures int
		Note     string
	}
	read := func() (lines []warning, total int) {
		for _, l := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
			var w warning
			var v map[string]any
			if json.Unmarshal([]byte(l), &v) == nil && v["level"] == "WARN" && v["msg"] == "bearer token not recognised; the request is served as public" {
				json.Unmarshal([]byte(l), &w)
				lines = append(lines, w)
				total += w.Failures
			}
		}
		return lines, total
	}
	deadline := time.Now().Add(20 * time.Second)
	lines, total := read()
	for total < n && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		lines, total = read()
	}
	if total != n {
		t.Fatalf("the warnings count %d failures, want %d: %+v", total, n, lines)
	}
	// One at once, then at most one per interval begun while sending, and
	// the last interval's.
	if most := 2 + int(sent/every); len(lines) > most || len(lines) < 2 {
		t.Errorf("%d failures in %v made %d warning lines, want 2 to %d: %+v", n, sent, len(lines), most, lines)
	}
	if lines[0].Failures != 1 || lines[1].Failures < 2 || !strings.Contains(lines[1].Note, "at most one line per "+every.String()) {
		t.Errorf("want the first failure alone, then counts: %+v", lines)
	}
}
