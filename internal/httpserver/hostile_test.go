package httpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

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
