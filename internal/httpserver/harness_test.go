package httpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testserver"
	"github.com/three-good-sources/3gs/internal/tools"
)

// controlled are the real tools, except that get_sources for the query
// "block" waits until released (or cancelled) and for "panic" panics: so
// tests can hold requests in flight without sleeping.
type controlled struct {
	*tools.Handlers
	entered chan string // the query of each held request, as it starts
	release chan struct{}
}

func (c *controlled) GetSources(ctx context.Context, in *gen.GetSourcesInput) (*gen.GetSourcesOutput, error) {
	q := ""
	if in.Query != nil {
		q = *in.Query
	}
	switch q {
	case "block":
		c.entered <- q
		select {
		case <-c.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "panic":
		panic("a handler bug")
	}
	return c.Handlers.GetSources(ctx, in)
}

// clock is a settable time source for session expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// harness is an HTTP server over the embedded registry, signed as shipped,
// with a user and an admin token.
type harness struct {
	t           testing.TB
	srv         *httpserver.Server
	ts          *httptest.Server
	tools       *controlled
	user, admin string
	clock       *clock
	logs        *testkit.SyncBuffer
}

func newHarness(t testing.TB, opt httpserver.Options) *harness {
	t.Helper()
	h := &harness{t: t, clock: &clock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}, logs: &testkit.SyncBuffer{}}
	secrets, keyring := testserver.Keyring(t, testserver.Token{Name: "alice", Tier: gen.TierUser}, testserver.Token{Name: "root", Tier: gen.TierAdmin})
	h.user, h.admin = secrets[0], secrets[1]
	reg, err := registry.Load(frozen.Registry(frozen.Basic))
	if err != nil {
		t.Fatal(err)
	}
	h.tools = &controlled{
		Handlers: tools.New(tools.Config{
			Registry: reg, Matcher: matcher.New(reg), Threshold: tools.DefaultThreshold,
			Signature: signature.Check(reg, frozen.Signature(frozen.Basic)),
			Modified:  time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		}),
		entered: make(chan string, 16), release: make(chan struct{}),
	}
	log := slog.New(slog.NewJSONHandler(h.logs, nil))
	if opt.Hosts == nil {
		opt.Hosts = httpserver.LoopbackHosts
	}
	opt.Log, opt.Now, opt.Version = log, h.clock.Now, "test"
	h.srv = httpserver.New(opt)
	h.srv.SetBackend(httpserver.Backend{
		MCP:       mcp.NewServer(mcp.Config{Handlers: h.tools, Version: "test", Log: log, Keyring: keyring}),
		Published: h.tools.Published,
	})
	h.ts = httptest.NewServer(h.srv.Handler())
	t.Cleanup(h.ts.Close)
	return h
}

// reply is a response read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// rpcError is the error member of a JSON-RPC response, if any.
func (r reply) rpcError() (code int, message string) {
	var v struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(r.body, &v) != nil || v.Error == nil {
		return 0, ""
	}
	return v.Error.Code, v.Error.Message
}

// do sends a request; headers are name/value pairs, and a value of "-"
// removes a header the harness would otherwise set.
func (h *harness) do(method, path, body string, headers ...string) reply {
	h.t.Helper()
	req, err := http.NewRequest(method, h.ts.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		if headers[i+1] == "-" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, b := testkit.Do(h.t, h.ts.Client(), req)
	return reply{resp.StatusCode, resp.Header, b}
}

func (h *harness) post(body string, headers ...string) reply {
	h.t.Helper()
	return h.do(http.MethodPost, "/mcp", body, headers...)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// open starts a legacy session and returns its id.
func (h *harness) open() string {
	h.t.Helper()
	r := h.post(initialize)
	id := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || id == "" {
		h.t.Fatalf("initialize: %d %s (session %q)", r.status, r.body, id)
	}
	return id
}

// modern is a 2026-07-28 request for method with the given params members
// (besides _meta), and the headers it must carry.
func modern(id int, method, params string) (string, []string) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if params != "" {
		meta = params + "," + meta
	}
	body := `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"` + method + `","params":{` + meta + `}}`
	return body, []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// call is a modern tools/call with its headers.
func call(id int, tool, args string) (string, []string) {
	body, headers := modern(id, "tools/call", `"name":"`+tool+`","arguments":`+args)
	return body, append(headers, "Mcp-Name", tool)
}
