package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// TestNewToolNeedsItsHandler walks the schema-first loop in a copy of the
// repository: a new tool schema, go generate, and the build fails naming
// the method the tool needs; once the method is written, it builds. A
// schema change that is not implemented cannot ship.
func TestNewToolNeedsItsHandler(t *testing.T) {
	testkit.Long(t, "it builds a copy of the repository with go commands")
	t.Parallel() // a minute of go commands in its own directory
	repo := copyRepo(t)
	write(t, filepath.Join(repo, "schema", "tools", "echo_back.json"), `{
  "name": "echo_back",
  "title": "Echo back",
  "description": "Returns its text unchanged. Example: {\"text\": \"hello\"}.",
  "tier": "public",
  "annotations": { "title": "Echo back", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false },
  "inputSchema": {
    "type": "object",
    "additionalProperties": false,
    "required": ["text"],
    "properties": { "text": { "description": "What to echo.", "type": "string", "maxLength": 100 } }
  },
  "outputSchema": {
    "type": "object",
    "additionalProperties": false,
    "required": ["text"],
    "properties": { "text": { "description": "The same text.", "type": "string" } }
  },
  "examples": {
    "arguments": [{ "text": "hello" }],
    "invalid": { "text": 5 },
    "result": { "text": "hello" }
  }
}
`)
	// The packages a new tool reaches: the generated code, the tools, the
	// MCP core and both transports. CI builds, vets and tests the whole
	// tree in the copy; a contributor's go test ./... keeps to these,
	// which are most of the compiling (nearly every package imports gen)
	// without the commands, the rest of the tests and their binaries.
	pkgs := []string{"./gen/...", "./internal/tools/...", "./internal/mcp/...", "./internal/stdio/...", "./internal/httpserver/..."}
	if os.Getenv("CI") != "" {
		pkgs = []string{"./..."}
	}
	goCmd(t, repo, true, "generate", "./...")
	out := goCmd(t, repo, false, append([]string{"build"}, pkgs...)...)
	if !strings.Contains(out, "missing method EchoBack") {
		t.Fatalf("the build should fail for want of EchoBack; it said:\n%s", out)
	}
	if contract, _ := os.ReadFile(filepath.Join(repo, "schema", "CONTRACT.md")); !strings.Contains(string(contract), "## echo_back") {
		t.Error("the contract does not list the new tool")
	}

	write(t, filepath.Join(repo, "internal", "tools", "echo_back.go"), `package tools

import (
	"context"

	"github.com/three-good-sources/3gs/gen"
)

func (h *Handlers) EchoBack(_ context.Context, in *gen.EchoBackInput) (*gen.EchoBackOutput, error) {
	return &gen.EchoBackOutput{Text: in.Text}, nil
}

func (h *Handlers) EchoBackText(out *gen.EchoBackOutput) string { return out.Text }
`)
	// With its schema and its file, and no other edit, the suite passes:
	// every test that needs the tools, a tier's tools or an example call
	// reads the generated tables. (-short keeps this test, and the
	// slowest, from running again inside the copy; -vet=off because go
	// vet has just run every analyzer go test would.)
	goCmd(t, repo, true, append([]string{"vet"}, pkgs...)...)
	goCmd(t, repo, true, append([]string{"test", "-short", "-vet=off"}, pkgs...)...)
}

// copyRepo copies the repository's files, without .git and installed npm
// packages, into a temporary directory, and commits them to a new git
// repository there, as a contributor's checkout would be (3gs schema diff
// compares with a revision).
func copyRepo(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "3gs")
	testkit.CopyTree(t, testkit.Root(), dst, ".git", "node_modules")
	committedRegistry(t, dst)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "copy"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dst
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git is needed to stand in for a checkout: git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dst
}

// committedRegistry puts the committed registry.json and its signature in
// the copy in place of the working tree's. The suite run in the copy is
// about the new tool; a curator's uncommitted edit of the shipped registry
// fails the tests whose subject is that registry (the matcher's golden
// sets, the shipped transcript) in the real tree, and should not fail this
// one as well. Without git history the working tree's files stay.
func committedRegistry(t *testing.T, repo string) {
	t.Helper()
	for _, name := range []string{"registry.json", "registry.json.sig"} {
		cmd := exec.Command("git", "show", "HEAD:"+name)
		cmd.Dir = testkit.Root()
		data, err := cmd.Output()
		if err != nil {
			t.Logf("using the working tree's %s: git show: %v", name, err)
			continue
		}
		write(t, filepath.Join(repo, name), string(data))
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goCmd runs the go command in dir and returns its output; it fails the
// test unless the command's success is as expected.
func goCmd(t *testing.T, dir string, wantOK bool, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	// CI= : the copy has no installed npm packages, so the tests that
	// drive 3gs from Node clients skip there rather than fail as CI makes
	// them; they run in the real tree.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "CI=")
	out, err := cmd.CombinedOutput()
	if (err == nil) != wantOK {
		t.Fatalf("go %s: %v (want success: %v)\n%s", strings.Join(args, " "), err, wantOK, out)
	}
	return string(out)
}
