package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/loadgen"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// TestTypeScriptSDKOverHTTP runs the official TypeScript SDK's Streamable
// HTTP client (testdata/http_client.mjs) against the built binary: it lists
// and calls every tool with an admin token, then SIGTERM stops the server
// with exit status 0. The access log names each call and never a token.
func TestTypeScriptSDKOverHTTP(t *testing.T) {
	node := needSDK(t)
	bin := testkit.Binary(t)
	// Our registry under a curator key of the test's own, signed, and the
	// key given to the server, so the curator tools can write signed
	// edits (an unsigned registry that names a real key is refused).
	n := curator.New(t, "")
	n.Write(t, curator.Basic(t))
	dir, reg, keyPath := n.Dir, n.Registry, n.KeyFile
	tokens := filepath.Join(dir, "tokens.json")
	admin, err := auth.Add(tokens, "root", gen.TierAdmin, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s := testkit.Serve(t, bin, "--registry", reg, "--key-file", keyPath, "--tokens", tokens)
	cmd := exec.Command(node, "testdata/http_client.mjs", s.URL, admin)
	// A --registry PATH the server edits takes proposals (--proposals auto).
	cmd.Env = append(os.Environ(), toolsEnv(t, mcp.Config{Proposals: true}))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the TypeScript SDK HTTP client failed: %v\n%s\nserver log:\n%s", err, out, s.Stderr())
	}
	if !strings.Contains(string(out), "e2e http ok") {
		t.Fatalf("unexpected output:\n%s", out)
	}
	t.Logf("%s", out)

	if err := s.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-s.Done
	if err := s.Cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, s.Stderr())
	}
	logs := s.Stderr()
	for _, want := range []string{"tool=upsert_category", "tool=get_sources", "rpc=initialize", "method=DELETE", "all requests finished"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if strings.Contains(logs, admin) {
		t.Error("the admin token reached the log")
	}
}

// TestHTTPPortInUse: a taken address is reported at once, with the fix.
func TestHTTPPortInUse(t *testing.T) {
	bin := testkit.Binary(t)
	s := testkit.Serve(t, bin)
	addr := strings.TrimSuffix(strings.TrimPrefix(s.URL, "http://"), "/mcp")
	cmd := exec.Command(bin, "serve", "--http", addr)
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "cannot listen on "+addr) || !strings.Contains(string(out), "--http") {
		t.Fatalf("second server on %s: exit %d\n%s", addr, code, out)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// needSDK returns node, skipping (failing in CI) when the npm packages are
// not installed.
func needSDK(t *testing.T) string {
	t.Helper()
	return needNodePackage(t, "@modelcontextprotocol/sdk")
}

// needNodePackage returns node, skipping (failing in CI) when the npm
// package pkg is not installed in testdata.
func needNodePackage(t *testing.T, pkg string) string {
	t.Helper()
	return testkit.NeedNodePackage(t, "testdata", pkg, "npm ci --prefix internal/e2e/testdata")
}

// TestConformanceSuite runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in testdata/package.json)
// against the built binary over HTTP. The scenarios 3gs cannot pass, for
// features it does not have, are listed with reasons in
// testdata/conformance/baseline.yml; the suite fails on any other failure
// and on a listed scenario that passes. The transport and core scenarios
// must be among those that pass.
func TestConformanceSuite(t *testing.T) {
	node := needSDK(t)
	suite, err := filepath.Abs("testdata/node_modules/@modelcontextprotocol/conformance/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	shim, _ := filepath.Abs("testdata/conformance/register.mjs")
	baseline, _ := filepath.Abs("testdata/conformance/baseline.yml")
	s := testkit.Serve(t, testkit.Binary(t))
	cmd := exec.Command(node, "--import", shim, suite, "server", "--url", s.URL, "--expected-failures", baseline)
	cmd.Dir = t.TempDir() // where the suite may write its results
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the conformance suite failed: %v\n%s\nserver log:\n%s", err, out, s.Stderr())
	}
	for _, scenario := range []string{"server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"} {
		if !regexp.MustCompile(`✓ ` + regexp.QuoteMeta(scenario) + `: \d+ passed, 0 failed`).Match(out) {
			t.Errorf("scenario %s did not pass", scenario)
		}
	}
	summary := out
	if i := strings.Index(string(out), "=== SUMMARY ==="); i >= 0 {
		summary = out[i:]
	}
	t.Logf("%s", summary)
}

// loadQueries are get_sources questions for the embedded registry.
var loadQueries = []string{
	"how do I learn the rust programming language", "harden ssh on a linux server", "git rebase vs merge",
	"best password manager", "self host email", "kubernetes tutorial", "postgres performance tuning", "quantum physics supercollider",
}

// TestHTTPLoad drives the built binary with 64 concurrent keep-alive
// clients and requires every request to be answered correctly; the
// latency figures go to the test log. It runs for THREEGS_LOAD_DURATION
// (default 2s, 0.5s under -short; CI runs it for 10s).
func TestHTTPLoad(t *testing.T) {
	duration := 2 * time.Second
	if testing.Short() {
		duration = 500 * time.Millisecond
	}
	if v := os.Getenv("THREEGS_LOAD_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("THREEGS_LOAD_DURATION: %v", err)
		}
		duration = d
	}
	s := testkit.Serve(t, testkit.Binary(t))
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: s.URL, Clients: 64, Warmup: time.Second, Duration: duration, Queries: loadQueries})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("64 clients, %s: %s", duration, res)
	if res.Errors != 0 || res.Requests == 0 {
		t.Fatalf("%d errors in %d requests; first: %s", res.Errors, res.Requests, res.FirstError)
	}
}
