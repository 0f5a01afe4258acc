package mcp_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/testserver"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/mcp"
)

// tierServer serves a writable copy of our registry with a tokens file
// holding a user token, an admin token and a revoked one.
type tierServer struct {
	srv                  *mcp.Server
	keyring              *auth.Keyring
	user, admin, revoked string
}

func newTierServer(t *testing.T) *tierServer {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	ts := &tierServer{}
	var err error
	for _, a := range []struct {
		dst  *string
		name string
		tier gen.Tier
	}{{&ts.user, "alice", gen.TierUser}, {&ts.admin, "root", gen.TierAdmin}, {&ts.revoked, "old", gen.TierAdmin}} {
		if *a.dst, err = auth.Add(tokens, a.name, a.tier, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := auth.Revoke(tokens, "old"); err != nil {
		t.Fatal(err)
	}
	if ts.keyring, err = auth.LoadKeyring(tokens); err != nil {
		t.Fatal(err)
	}
	ts.srv = ts.fresh(t)
	return ts
}

// fresh is a server with the same tokens over a new copy of the embedded
// registry, so curator tools' example calls (which change it) start from
// the same state every time.
func (ts *tierServer) fresh(t *testing.T) *mcp.Server {
	t.Helper()
	return testserver.New(t, testserver.Options{Editable: true, Keyring: ts.keyring}).Server
}

// source is one way a token reaches the server.
type source struct {
	name string
	// session and ctx build the session and context; params are extra
	// members of the request's params (with "_meta" as a raw object).
	session func(srv *mcp.Server, token string) *mcp.Session
	ctx     func(token string) context.Context
	params  func(token string) string
}

var sources = []source{
	{"_meta", plainSession, plainCtx, func(tok string) string { return `"_meta":{"io.3gs/token":` + quote(tok) + `}` }},
	{"params.token", plainSession, plainCtx, func(tok string) string { return `"token":` + quote(tok) }},
	{"THREEGS_TOKEN", func(srv *mcp.Server, tok string) *mcp.Session { return srv.NewSessionWithToken(tok) }, plainCtx, noParams},
	{"Authorization header", plainSession, func(tok string) context.Context { return auth.WithTransportToken(context.Background(), tok) }, noParams},
}

func plainSession(srv *mcp.Server, _ string) *mcp.Session { return srv.NewSession() }
func plainCtx(string) context.Context                     { return context.Background() }
func noParams(string) string                              { return "" }
func quote(s string) string                               { b, _ := json.Marshal(s); return string(b) }

// call sends one request with extra params members and returns the result
// or error object.
func call(t *testing.T, sess *mcp.Session, ctx context.Context, method, params string) (result map[string]any, errObj map[string]any) {
	t.Helper()
	line := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `}}`
	m, _, perr := jsonrpc.Parse([]byte(line))
	if perr != nil {
		t.Fatalf("%s: %v", line, perr)
	}
	var resp struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	out := sess.Handle(ctx, m, nil)
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return resp.Result, resp.Error
}

func join(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ",")
}

// example is a tool's typical call, from its schema's examples.
func example(tool string) string { return gen.LookupTool(tool).Examples.Arguments[0] }

// The tier matrix: for each caller and each way of sending the token, the
// exact tool list and the outcome of calling every tool.
//
// The expectations come from the generated tool table and the tier rules,
// never from a list of tools here: a caller sees the tools at or below its
// tier that this node's configuration lists (mcp.Listed); it runs those at
// or below; a
// discoverable tool above answers -31001 to a caller without a valid token
// and -31003 to one whose token is too low; every other tool answers as
// unknown.
func TestTierMatrix(t *testing.T) {
	ts := newTierServer(t)
	const ok, authReq, forbidden, notFound = 0, jsonrpc.CodeAuthRequired, jsonrpc.CodeForbidden, jsonrpc.CodeMethodNotFound
	outcomes := func(tier gen.Tier, authenticated bool) map[string]int {
		m := map[string]int{}
		for _, tool := range gen.Tools {
			switch {
			case tool.Tier <= tier:
				m[tool.Name] = ok
			case !tool.Discoverable:
				m[tool.Name] = notFound
			case authenticated:
				m[tool.Name] = forbidden
			default:
				m[tool.Name] = authReq
			}
		}
		return m
	}
	public := mcp.ListedFor(gen.TierPublic, mcp.Config{})
	callers := []struct {
		name  string
		token string
		list  []string
		calls map[string]int
	}{
		{"no token", "", public, outcomes(gen.TierPublic, false)},
		{"unknown token", "3gs_not-a-token", public, outcomes(gen.TierPublic, false)},
		{"revoked token", ts.revoked, public, outcomes(gen.TierPublic, false)},
		{"user", ts.user, mcp.ListedFor(gen.TierUser, mcp.Config{}), outcomes(gen.TierUser, true)},
		{"admin", ts.admin, mcp.ListedFor(gen.TierAdmin, mcp.Config{}), outcomes(gen.TierAdmin, true)},
	}
	for _, c := range callers {
		for _, src := range sources {
			if c.token == "" && src.name != "_meta" {
				continue // no token is no token, whatever the source
			}
			t.Run(c.name+" via "+src.name, func(t *testing.T) {
				srv := ts.fresh(t)
				sess := src.session(srv, c.token)
				ctx := src.ctx(c.token)
				extra := src.params(c.token)
				if c.token == "" {
					sess, ctx, extra = srv.NewSession(), context.Background(), ""
				}
				if _, e := call(t, sess, ctx, "initialize", `"protocolVersion":"2025-11-25"`); e != nil {
					t.Fatal(e)
				}
				res, e := call(t, sess, ctx, "tools/list", extra)
				if e != nil {
					t.Fatalf("tools/list: %v", e)
				}
				if got := toolNames(res); !slices.Equal(got, c.list) {
					t.Errorf("tools/list = %v, want %v", got, c.list)
				}
				for _, tool := range gen.Tools {
					name := tool.Name
					_, e := call(t, sess, ctx, "tools/call", join(`"name":"`+name+`","arguments":`+example(name), extra))
					got := ok
					if e != nil {
						got = int(e["code"].(float64))
					}
					if got != c.calls[name] {
						t.Errorf("%s: outcome %d (%v), want %d", name, got, e, c.calls[name])
						continue
					}
					switch got {
					case authReq, forbidden:
						data, _ := e["data"].(map[string]any)
						want := gen.LookupTool(name).Tier.String()
						if data["required_tier"] != want {
							t.Errorf("%s: data %v, want required_tier %s", name, data, want)
						}
						// Every refusal says how a token of the tier is made
						// and given to the server.
						newToken := "3gs token new --tier " + want
						if hint, _ := data["hint"].(string); !strings.Contains(hint, newToken) || !strings.Contains(hint, "serve --tokens FILE") {
							t.Errorf("%s: data %v, want a hint naming %q and serve --tokens", name, data, newToken)
						}
						// A caller who sent a token learns that the token is
						// what is wrong; one who sent none, that one is needed
						// and how the operator makes one.
						msg, _ := e["message"].(string)
						switch {
						case got == forbidden:
							if !strings.HasPrefix(msg, "Insufficient permissions: ") || !strings.Contains(msg, newToken) {
								t.Errorf("%s with too low a tier: message %q", name, msg)
							}
						case c.token == "" && (!strings.HasPrefix(msg, "Authentication required: "+name+" needs a token of tier "+want) || !strings.Contains(msg, newToken) || !strings.Contains(msg, "--tokens FILE")):
							t.Errorf("%s without a token: message %q", name, msg)
						case c.token != "" && !strings.HasPrefix(msg, "Token not recognised: "):
							t.Errorf("%s with an unknown token: message %q, want it to say the token is not recognised", name, msg)
						}
					case notFound:
						if e["message"] != "Tool not found: "+name || e["data"] != nil {
							t.Errorf("%s: a hidden tool must answer exactly like an unknown one, got %v", name, e)
						}
					}
				}
			})
		}
	}
	// An unknown tool answers exactly as a hidden one does.
	_, e := call(t, ts.srv.NewSession(), context.Background(), "tools/call", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"nope","arguments":{}`)
	if e["message"] != "Tool not found: nope" || e["data"] != nil {
		t.Errorf("unknown tool: %v", e)
	}
}

func toolNames(res map[string]any) []string {
	var names []string
	for _, tool := range res["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	return names
}

// For every caller, tools/call runs every tool tools/list shows; a tool
// not listed answers as unknown, unless it is discoverable (-31001 or
// -31003) or listed only under a condition (listedWhen) this node or
// caller does not meet, which it may still be called without.
func TestCallsFollowTheList(t *testing.T) {
	ts := newTierServer(t)
	for _, token := range []string{"", "3gs_bogus", ts.revoked, ts.user, ts.admin} {
		sess := ts.srv.NewSessionWithToken(token)
		call(t, sess, context.Background(), "initialize", `"protocolVersion":"2025-11-25"`)
		res, _ := call(t, sess, context.Background(), "tools/list", "")
		listed := toolNames(res)
		for _, tool := range gen.Tools {
			_, e := call(t, sess, context.Background(), "tools/call", `"name":"`+tool.Name+`","arguments":`+tool.Examples.Arguments[0])
			code := 0
			if e != nil {
				code = int(e["code"].(float64))
			}
			shown := slices.Contains(listed, tool.Name)
			ran := code != jsonrpc.CodeMethodNotFound && code != jsonrpc.CodeAuthRequired && code != jsonrpc.CodeForbidden
			switch {
			case !shown && tool.Discoverable && ran:
				t.Errorf("token %.8q: %s is above the caller's tier but ran", token, tool.Name)
			case !shown && tool.ListedWhen == gen.ListedAlways && !tool.Discoverable && code != jsonrpc.CodeMethodNotFound:
				t.Errorf("token %.8q: %s is not listed but answers %d", token, tool.Name, code)
			case shown && !ran && !tool.Discoverable:
				t.Errorf("token %.8q: %s is listed but refused with %d", token, tool.Name, code)
			case shown && tool.Discoverable && !ran && code == jsonrpc.CodeMethodNotFound:
				t.Errorf("token %.8q: discoverable %s answers as unknown", token, tool.Name)
			}
		}
	}
}

// When several tokens arrive, the transport's wins, then _meta's, then
// params.token, then the session's.
func TestTokenPrecedence(t *testing.T) {
	ts := newTierServer(t)
	public, admin := len(mcp.ListedFor(gen.TierPublic, mcp.Config{})), len(mcp.ListedFor(gen.TierAdmin, mcp.Config{}))
	cases := []struct {
		name    string
		session string
		ctx     context.Context
		params  string
		want    int // tools listed
	}{
		{"header (bad) over _meta (admin)", "", auth.WithTransportToken(context.Background(), "3gs_bad"), `"_meta":{"io.3gs/token":` + quote(ts.admin) + `}`, public},
		{"header (admin) over _meta (bad)", "", auth.WithTransportToken(context.Background(), ts.admin), `"_meta":{"io.3gs/token":"3gs_bad"}`, admin},
		{"_meta (admin) over params.token (bad)", "", context.Background(), `"_meta":{"io.3gs/token":` + quote(ts.admin) + `},"token":"3gs_bad"`, admin},
		{"params.token (bad) over session (admin)", ts.admin, context.Background(), `"token":"3gs_bad"`, public},
		{"session (admin) alone", ts.admin, context.Background(), "", admin},
	}
	for _, c := range cases {
		sess := ts.srv.NewSessionWithToken(c.session)
		call(t, sess, c.ctx, "initialize", `"protocolVersion":"2025-11-25"`)
		res, e := call(t, sess, c.ctx, "tools/list", c.params)
		if e != nil || len(toolNames(res)) != c.want {
			t.Errorf("%s: %v %v, want %d tools", c.name, toolNames(res), e, c.want)
		}
	}
	// A token that is not a string is a malformed request, not a public one.
	_, e := call(t, ts.srv.NewSession(), context.Background(), "tools/list", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.3gs/token":42}`)
	if e == nil || e["code"].(float64) != jsonrpc.CodeInvalidParams || e["data"].(map[string]any)["path"] != "_meta.io.3gs/token" {
		t.Errorf("non-string token: %v", e)
	}
}

// In the modern era a list made for a token holder is marked private; the
// public list may be shared.
func TestModernCacheScope(t *testing.T) {
	ts := newTierServer(t)
	meta := func(tok string) string {
		m := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
		if tok != "" {
			m += `,"io.3gs/token":` + quote(tok)
		}
		return `"_meta":{` + m + `}`
	}
	for tok, want := range map[string]string{"": "public", "3gs_bad": "public", ts.user: "private", ts.admin: "private"} {
		res, e := call(t, ts.srv.NewSession(), context.Background(), "tools/list", meta(tok))
		if e != nil || res["cacheScope"] != want {
			t.Errorf("token %.8q: cacheScope %v (%v), want %s", tok, res["cacheScope"], e, want)
		}
	}
}
