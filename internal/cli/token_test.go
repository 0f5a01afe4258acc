package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/testkit"
)

func TestTokenCommands(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	code, tok, errOut := run(t, nil, "token", "new", "--tokens", path, "--tier", "admin", "--name", "root")
	if code != ExitOK || !strings.HasPrefix(tok, "3gs_") || !strings.Contains(errOut, "shown this once") {
		t.Fatalf("token new: %d %q %s", code, tok, errOut)
	}
	if code, _, _ = run(t, map[string]string{"THREEGS_TOKENS": path}, "token", "new", "--tier", "user", "--name", "alice"); code != ExitOK {
		t.Fatal("token new with THREEGS_TOKENS")
	}
	code, out, _ := run(t, nil, "token", "list", "--tokens", path)
	if code != ExitOK || !strings.Contains(out, "root") || !strings.Contains(out, "admin") || !strings.Contains(out, "alice") || strings.Contains(out, strings.TrimSpace(tok)) {
		t.Errorf("token list: %s", out)
	}
	if code, out, _ = run(t, nil, "token", "revoke", "--tokens", path, "alice"); code != ExitOK || !strings.Contains(out, "SIGHUP") {
		t.Errorf("revoke: %d %s", code, out)
	}
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"token"}, ExitUsage, "Usage: 3gs token VERB"},
		{[]string{"token", "mint"}, ExitUsage, `unknown verb "mint"`},
		{[]string{"token", "new", "--tier", "user", "--name", "x"}, ExitUsage, "--tokens PATH"},
		{[]string{"token", "new", "--tokens", path, "--tier", "public", "--name", "x"}, ExitUsage, "--tier must be user or admin"},
		{[]string{"token", "new", "--tokens", path, "--tier", "user"}, ExitUsage, "--name NAME"},
		{[]string{"token", "new", "--tokens", path, "--tier", "user", "--name", "root"}, ExitFail, "already exists"},
		{[]string{"token", "revoke", "--tokens", path, "alice"}, ExitFail, `no token named "alice"`},
		{[]string{"token", "revoke", "--tokens", path}, ExitUsage, "name one token"},
	} {
		code, _, errOut := run(t, nil, c.args...)
		if code != c.code || !strings.Contains(errOut, c.says) {
			t.Errorf("%v: %d %s; want %d saying %q", c.args, code, errOut, c.code, c.says)
		}
	}
}

// serveLines runs `3gs serve` in-process with the given request lines and
// returns the response lines by id.
func serveLines(t *testing.T, environ map[string]string, args []string, requests ...string) (int, map[string]map[string]any, string) {
	t.Helper()
	in := `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" + strings.Join(requests, "\n") + "\n"
	var out, errOut bytes.Buffer
	env := &Env{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return environ[k] }, Environ: environOf(environ)}
	code := Run(context.Background(), append([]string{"serve"}, args...), env)
	byID := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			id, _ := json.Marshal(m["id"])
			byID[strings.Trim(string(id), `"`)] = m
		}
	}
	return code, byID, errOut.String()
}

func TestServeWithTokens(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	_, tok, _ := run(t, nil, "token", "new", "--tokens", tokens, "--tier", "admin", "--name", "root")
	tok = strings.TrimSpace(tok)
	reg := filepath.Join(dir, "registry.json")
	os.WriteFile(reg, testkit.WithCurator(frozen.Registry(frozen.Basic), "pk:placeholder"), 0o644)
	remove := `{"jsonrpc":"2.0","id":"rm","method":"tools/call","params":{"name":"remove_category","arguments":{"slug":"rust-learning"}}}`
	list := `{"jsonrpc":"2.0","id":"list","method":"tools/list"}`

	// THREEGS_TOKEN makes the stdio session admin: the change lands, in the
	// file and in the audit log beside it.
	code, res, errOut := serveLines(t, map[string]string{"THREEGS_TOKEN": tok, "THREEGS_TOKENS": tokens}, []string{"--registry", reg}, remove)
	if code != ExitOK || res["rm"]["result"] == nil {
		t.Fatalf("admin remove: %d %v %s", code, res["rm"], errOut)
	}
	if data, _ := os.ReadFile(reg); bytes.Contains(data, []byte(`"rust-learning"`)) {
		t.Error("the file still holds the removed category")
	}
	audit, err := os.ReadFile(reg + ".audit.jsonl")
	if err != nil || !strings.Contains(string(audit), `"action":"remove","slug":"rust-learning","actor":"root"`) {
		t.Errorf("audit log: %s %v", audit, err)
	}
	// Without the token: the admin tools are hidden.
	_, res, _ = serveLines(t, map[string]string{"THREEGS_TOKENS": tokens}, []string{"--registry", reg}, list, remove)
	if tools := res["list"]["result"].(map[string]any)["tools"].([]any); len(tools) != len(mcp.ListedFor(gen.TierPublic, mcp.Config{Proposals: true})) {
		t.Errorf("public list has %d tools, want %v", len(tools), mcp.ListedFor(gen.TierPublic, mcp.Config{Proposals: true}))
	}
	if e, _ := res["rm"]["error"].(map[string]any); e == nil || e["code"].(float64) != -32601 {
		t.Errorf("public remove: %v", res["rm"])
	}
	// The embedded registry has no file: the admin tools say so.
	_, res, _ = serveLines(t, map[string]string{"THREEGS_TOKEN": tok}, []string{"--tokens", tokens}, strings.Replace(remove, "rust-learning", "go-learning", 1))
	r, _ := res["rm"]["result"].(map[string]any)
	if r == nil || r["isError"] != true || !strings.Contains(r["content"].([]any)[0].(map[string]any)["text"].(string), "built into 3gs") {
		t.Errorf("embedded remove: %v", res["rm"])
	}
	// A broken tokens file stops the server at start.
	os.WriteFile(tokens, []byte("{"), 0o600)
	if code, _, errOut := serveLines(t, nil, []string{"--tokens", tokens}); code != ExitFail || !strings.Contains(errOut, "--tokens (THREEGS_TOKENS): "+tokens+" is not a valid tokens file") {
		t.Errorf("broken tokens file: %d %s", code, errOut)
	}
}
