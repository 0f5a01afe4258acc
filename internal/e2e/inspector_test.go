package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// TestInspectorCLI drives the built binary with the MCP Inspector's CLI
// (@modelcontextprotocol/inspector, pinned in testdata/package.json) over
// stdio, as a host would start it: tools/list, with --strict so any tool
// schema that would not carry over to other clients fails the run (once
// anonymously, once with an admin token so every tool's schema is linted),
// then a get_sources call.
func TestInspectorCLI(t *testing.T) {
	node := needNodePackage(t, "@modelcontextprotocol/inspector")
	bin := testkit.Binary(t)
	cli, err := filepath.Abs("testdata/node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js")
	if err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	tok, err := exec.Command(bin, "token", "new", "--tokens", tokens, "--tier", "admin", "--name", "inspector").Output()
	if err != nil {
		t.Fatal(err)
	}
	inspect := func(args ...string) map[string]any {
		t.Helper()
		// The target goes first: --tool-arg takes every word after it.
		cmd := exec.Command(node, append([]string{cli, bin, "serve", "--format", "json", "-e", "THREEGS_LOG_LEVEL=warn"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("inspector %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		var out struct {
			Result         map[string]any `json:"result"`
			SchemaFindings []any          `json:"schemaFindings"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("inspector %s printed %q: %v", strings.Join(args, " "), stdout.String(), err)
		}
		if len(out.SchemaFindings) > 0 {
			t.Errorf("schema portability findings: %v", out.SchemaFindings)
		}
		return out.Result
	}
	count := func(r map[string]any) int { tools, _ := r["tools"].([]any); return len(tools) }

	if n, want := count(inspect("--method", "tools/list", "--strict")), len(mcp.ListedFor(gen.TierPublic, mcp.Config{})); n != want {
		t.Errorf("an anonymous client lists %d tools, want %d", n, want)
	}
	admin := inspect("--method", "tools/list", "--strict", "-e", "THREEGS_TOKENS="+tokens, "-e", "THREEGS_TOKEN="+strings.TrimSpace(string(tok)))
	if n, want := count(admin), len(mcp.ListedFor(gen.TierAdmin, mcp.Config{})); n != want {
		t.Errorf("an admin lists %d tools, want %d", n, want)
	}
	r := inspect("--method", "tools/call", "--tool-name", "get_sources", "--tool-arg", "query=learn rust")
	sc, _ := r["structuredContent"].(map[string]any)
	sources, _ := sc["sources"].([]any)
	if r["isError"] != false || sc["slug"] != "rust-learning" || len(sources) != 3 {
		t.Errorf("get_sources: %v", r)
	}
}
