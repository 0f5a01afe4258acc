package httpserver_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testserver"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/wirecheck"
)

// FuzzEndpoint is POST /mcp on arbitrary bodies and headers: the status
// is one the endpoint documents, never 500 (503 only once initialize has
// filled the session bound); a 202 has no body and every
// other answer is one well-formed JSON-RPC response; a clean request
// answered 200 is answered under its own id; a clean notification or
// client response gets 202. The bits of flags pick the session, the
// version header and the token; method and name go in Mcp-Method and
// Mcp-Name.
func FuzzEndpoint(f *testing.F) {
	seeds := []string{
		initialize,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"learn rust"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","id":6,"id":7,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":8,"method":"ping"}]`,
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i), "tools/call", "get_sources")
	}
	srv, sid, admin := fuzzServer(f)
	handler := srv.Handler()
	f.Fuzz(func(t *testing.T, body []byte, flags uint8, method, name string) {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		switch flags & 3 {
		case 1:
			req.Header.Set("Mcp-Session-Id", sid)
		case 2:
			req.Header.Set("Mcp-Session-Id", "not-a-session")
		}
		switch flags >> 2 & 3 {
		case 1:
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		case 2:
			req.Header.Set("MCP-Protocol-Version", mcp.ModernVersion)
		case 3:
			req.Header.Set("MCP-Protocol-Version", name)
		}
		if flags&16 != 0 {
			req.Header.Set("Authorization", "Bearer "+admin)
		}
		if flags&32 != 0 && validHeader(method) {
			req.Header.Set("Mcp-Method", method)
		}
		if flags&64 != 0 && validHeader(name) {
			req.Header.Set("Mcp-Name", name)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		res := rec.Result()
		out := bytes.TrimSuffix(rec.Body.Bytes(), []byte("\n"))
		switch res.StatusCode {
		case http.StatusAccepted:
			if len(out) > 0 {
				t.Fatalf("202 with a body: %q", out)
			}
		case http.StatusOK, http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge:
			id, err := wirecheck.CheckResponse(out)
			if err != nil {
				t.Fatalf("%d: %v", res.StatusCode, err)
			}
			if kind, want, _ := wirecheck.Classify(body); kind == wirecheck.CleanRequest && res.StatusCode == http.StatusOK && id != want {
				t.Fatalf("request %s answered as %s: %s", want, id, out)
			}
		case http.StatusServiceUnavailable:
			// Each initialize opens a session; a long run fills the bound.
			if _, err := wirecheck.CheckResponse(out); err != nil || res.Header.Get("Retry-After") == "" {
				t.Fatalf("503 without Retry-After or a JSON-RPC body: %q", out)
			}
		default:
			t.Fatalf("status %d for %q: %s", res.StatusCode, body, out)
		}
		if kind, _, _ := wirecheck.Classify(body); (kind == wirecheck.CleanNotification || kind == wirecheck.CleanResponse) &&
			res.StatusCode != http.StatusAccepted && res.StatusCode != http.StatusBadRequest && res.StatusCode != http.StatusNotFound {
			t.Fatalf("a notification or response got %d: %s", res.StatusCode, out)
		}
	})
}

// validHeader reports whether net/http would send s as a header value.
func validHeader(s string) bool {
	return !strings.ContainsAny(s, "\r\n\x00") && len(s) < 1024
}

// fuzzServer is an HTTP server over the real tools (none of the test
// doubles that block or panic), with one open legacy session and an admin
// token.
func fuzzServer(f *testing.F) (srv *httpserver.Server, sid, admin string) {
	secrets, keyring := testserver.Keyring(f, testserver.Token{Name: "root", Tier: gen.TierAdmin})
	admin = secrets[0]
	h, _ := testserver.Handlers(f, testserver.Options{})
	log := slog.New(slog.DiscardHandler)
	srv = httpserver.New(httpserver.Options{Hosts: httpserver.LoopbackHosts, Log: log, Version: "fuzz", MaxMessageBytes: 4096})
	srv.SetBackend(httpserver.Backend{MCP: mcp.NewServer(mcp.Config{Handlers: h, Version: "fuzz", Log: log, Keyring: keyring}), Published: h.Published})
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if sid = rec.Header().Get("Mcp-Session-Id"); sid == "" {
		f.Fatalf("initialize: %d %s", rec.Code, rec.Body)
	}
	return srv, sid, admin
}
