// Package e2e checks 3gs against real MCP clients.
package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/fixture"
)

// TestTypeScriptSDKClient runs the official TypeScript SDK client in
// testdata/client.mjs against the built binary. Its npm packages are pinned
// by testdata/package-lock.json; .ci/run installs them. Outside CI the test
// skips when they are not installed; in CI it fails instead.
func TestTypeScriptSDKClient(t *testing.T) {
	if _, err := os.Stat("testdata/node_modules/@modelcontextprotocol/sdk"); err != nil {
		msg := "the TypeScript SDK is not installed; run: npm ci --prefix internal/e2e/testdata"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "3gs")
	build := exec.Command("go", "build", "-o", bin, "./cmd/3gs")
	build.Dir = fixture.Root()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(node, "testdata/client.mjs", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("the TypeScript SDK client failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "e2e ok") {
		t.Fatalf("unexpected output:\n%s", out)
	}
	t.Logf("%s", out)
}
