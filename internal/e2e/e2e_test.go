// Package e2e checks 3gs against real MCP clients.
package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// TestMain removes the binary the tests built.
func TestMain(m *testing.M) { testkit.Main(m) }

// TestTypeScriptSDKClient runs the official TypeScript SDK client in
// testdata/client.mjs against the built binary. Its npm packages are pinned
// by testdata/package-lock.json; .ci/run installs them. Outside CI the test
// skips when they are not installed; in CI it fails instead.
func TestTypeScriptSDKClient(t *testing.T) {
	node := needSDK(t)
	bin := testkit.Binary(t)
	cmd := exec.Command(node, "testdata/client.mjs", bin)
	cmd.Env = append(os.Environ(), toolsEnv(t, mcp.Config{}))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the TypeScript SDK client failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "e2e ok") {
		t.Fatalf("unexpected output:\n%s", out)
	}
	t.Logf("%s", out)
}

// SIGTERM while stdin is still open: the server answers what it has read,
// logs nothing to stdout, and exits 0.
func TestSIGTERMExitsCleanly(t *testing.T) {
	bin := testkit.Binary(t)
	cmd := exec.Command(bin)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_categories"}}`)
	r := bufio.NewReader(stdout)
	for i := 0; i < 2; i++ {
		line, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, `{"jsonrpc":"2.0","id":`) {
			t.Fatalf("answer %d: %q %v", i+1, line, err)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nstderr:\n%s", err, stderr.String())
	}
	if len(rest) != 0 {
		t.Errorf("stdout after the answers: %q", rest)
	}
	if !strings.Contains(stderr.String(), "shutting down") {
		t.Errorf("stderr does not say it is shutting down:\n%s", stderr.String())
	}
}

// The built binary refuses to serve a registry changed after signing, with
// exit status 1 and the reason on stderr, and serves it with
// --allow-unsigned.
func TestTamperedRegistryExitStatus(t *testing.T) {
	bin := testkit.Binary(t)
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry.json")
	for _, name := range []string{"registry.json", "registry.json.sig"} {
		data, err := os.ReadFile(filepath.Join(testkit.Root(), name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "registry.json" {
			data = []byte(strings.Replace(string(data), "Rust", "Rusk", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	serve := func(args ...string) (int, string) {
		cmd := exec.Command(bin, append([]string{"serve", "--registry", reg}, args...)...)
		cmd.Stdin = strings.NewReader("") // EOF at once: serve exits 0 if it started
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode(), stderr.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, stderr.String()
	}
	code, stderr := serve()
	if code != 1 || !strings.Contains(stderr, "refusing to serve "+reg+": its signature does not verify: registry bytes changed since signing") {
		t.Errorf("tampered registry: exit %d, stderr:\n%s", code, stderr)
	}
	code, stderr = serve("--allow-unsigned")
	if code != 0 || !strings.Contains(stderr, "does not verify (--allow-unsigned)") {
		t.Errorf("with --allow-unsigned: exit %d, stderr:\n%s", code, stderr)
	}
	// Deleting the signature does not get the tampered bytes served: the
	// registry names a real curator key, so a missing signature is refused
	// like a wrong one.
	if err := os.Remove(reg + ".sig"); err != nil {
		t.Fatal(err)
	}
	code, stderr = serve()
	if code != 1 || !strings.Contains(stderr, "refusing to serve "+reg+": it names the curator key") || !strings.Contains(stderr, reg+".sig is missing") {
		t.Errorf("tampered registry without its signature: exit %d, stderr:\n%s", code, stderr)
	}
	code, stderr = serve("--allow-unsigned")
	if code != 0 || !strings.Contains(stderr, "(--allow-unsigned); it is reported as not verified") {
		t.Errorf("without a signature, with --allow-unsigned: exit %d, stderr:\n%s", code, stderr)
	}
}

// A token revoked while the server runs stops working after SIGHUP.
func TestSIGHUPReloadsTokens(t *testing.T) {
	bin := testkit.Binary(t)
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	tok, err := exec.Command(bin, "token", "new", "--tokens", tokens, "--tier", "admin", "--name", "root").Output()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--tokens", tokens)
	cmd.Env = append(os.Environ(), "THREEGS_TOKEN="+strings.TrimSpace(string(tok)))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	out, logs := bufio.NewReader(stdout), bufio.NewScanner(stderr)
	count := func(id int) int {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", id)
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(line, `{"name":"`)
	}
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	admin, public := len(mcp.ListedFor(gen.TierAdmin, mcp.Config{})), len(mcp.ListedFor(gen.TierPublic, mcp.Config{}))
	if n := count(1); n != admin {
		t.Fatalf("admin sees %d tools, want %d", n, admin)
	}
	if out, err := exec.Command(bin, "token", "revoke", "--tokens", tokens, "root").CombinedOutput(); err != nil {
		t.Fatalf("revoke: %v %s", err, out)
	}
	if n := count(2); n != admin {
		t.Fatalf("before SIGHUP the revoked token should still work (the file is read on SIGHUP): %d tools", n)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	for logs.Scan() { // wait for the reload to be logged, not for a time
		if strings.Contains(logs.Text(), "SIGHUP: tokens reloaded") {
			break
		}
	}
	if n := count(3); n != public {
		t.Errorf("after revoke and SIGHUP the caller sees %d tools, want the public %d", n, public)
	}
	go io.Copy(io.Discard, stderr)
}

// toolsEnv is THREEGS_E2E_TOOLS for the TypeScript clients: the tools
// listed to a public and to an admin caller of a node configured as c,
// each tool's first example arguments and its readOnlyHint, all from the
// generated tables.
func toolsEnv(t *testing.T, c mcp.Config) string {
	t.Helper()
	examples := map[string]json.RawMessage{}
	readOnly := map[string]bool{}
	for _, tool := range gen.Tools {
		if len(tool.Examples.Arguments) > 0 {
			examples[tool.Name] = json.RawMessage(tool.Examples.Arguments[0])
		}
		var m struct {
			Annotations struct {
				ReadOnlyHint bool `json:"readOnlyHint"`
			} `json:"annotations"`
		}
		if err := json.Unmarshal([]byte(tool.Manifest), &m); err != nil {
			t.Fatalf("%s's manifest: %v", tool.Name, err)
		}
		readOnly[tool.Name] = m.Annotations.ReadOnlyHint
	}
	data, err := json.Marshal(map[string]any{"public": mcp.ListedFor(gen.TierPublic, c), "admin": mcp.ListedFor(gen.TierAdmin, c), "examples": examples, "readOnly": readOnly})
	if err != nil {
		t.Fatal(err)
	}
	return "THREEGS_E2E_TOOLS=" + string(data)
}
