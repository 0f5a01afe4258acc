package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/loadgen"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// httpServer is the built binary serving HTTP on a free loopback port.
type httpServer struct {
	cmd  *exec.Cmd
	url  string // of /mcp
	mu   sync.Mutex
	logs strings.Builder
	done chan struct{} // closed when stderr ends
}

var servingURL = regexp.MustCompile(`msg="serving MCP over HTTP" url=(\S+)`)

// startHTTP runs `3gs serve --http 127.0.0.1:0 args...` and waits until
// it logs the address it serves on.
func startHTTP(t *testing.T, bin string, args ...string) *httpServer {
	t.Helper()
	s := &httpServer{cmd: exec.Command(bin, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...), done: make(chan struct{})}
	stderr, _ := s.cmd.StderrPipe()
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.mu.Lock()
			if s.logs.Len() < 1<<20 { // a load test logs far more; keep the start
				s.logs.WriteString(sc.Text() + "\n")
			}
			s.mu.Unlock()
			if m := servingURL.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	url, ok := <-found
	if !ok {
		t.Fatalf("the server exited before serving:\n%s", s.stderr())
	}
	s.url = url
	return s
}

func (s *httpServer) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// TestTypeScriptSDKOverHTTP runs the official TypeScript SDK's Streamable
// HTTP client (testdata/http_client.mjs) against the built binary: it lists
// and calls every tool with an admin token, then SIGTERM stops the server
// with exit status 0. The access log names each call and never a token.
func TestTypeScriptSDKOverHTTP(t *testing.T) {
	node := needSDK(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry.json")
	// Our registry under a curator key of the test's own, signed, and the
	// key given to the server, so the curator tools can write signed
	// edits (an unsigned registry that names a real key is refused).
	key, err := pkarr.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "curator.key")
	if err := pkarr.WriteKeyFile(keyPath, key); err != nil {
		t.Fatal(err)
	}
	base, err := registry.Load(threegs.DefaultRegistry)
	if err != nil {
		t.Fatal(err)
	}
	doc := base.Document()
	doc.Curator.Pubkey = pkarr.URI(pkarr.Public(key))
	if _, err := signature.WriteSigned(reg, gen.EncodeRegistry(&doc), key, time.Now(), 0o644); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens.json")
	admin, err := auth.Add(tokens, "root", gen.TierAdmin, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s := startHTTP(t, bin, "--registry", reg, "--key-file", keyPath, "--tokens", tokens)
	cmd := exec.Command(node, "testdata/http_client.mjs", s.url, admin)
	cmd.Env = append(os.Environ(), toolsEnv(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the TypeScript SDK HTTP client failed: %v\n%s\nserver log:\n%s", err, out, s.stderr())
	}
	if !strings.Contains(string(out), "e2e http ok") {
		t.Fatalf("unexpected output:\n%s", out)
	}
	t.Logf("%s", out)

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-s.done
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, s.stderr())
	}
	logs := s.stderr()
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
	bin := buildBinary(t)
	s := startHTTP(t, bin)
	addr := strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/mcp")
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
	if _, err := os.Stat("testdata/node_modules/" + pkg); err != nil {
		msg := pkg + " is not installed; run: npm ci --prefix internal/e2e/testdata"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH")
	}
	return node
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
	s := startHTTP(t, buildBinary(t))
	cmd := exec.Command(node, "--import", shim, suite, "server", "--url", s.url, "--expected-failures", baseline)
	cmd.Dir = t.TempDir() // where the suite may write its results
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the conformance suite failed: %v\n%s\nserver log:\n%s", err, out, s.stderr())
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
	s := startHTTP(t, buildBinary(t))
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: s.url, Clients: 64, Warmup: time.Second, Duration: duration, Queries: loadQueries})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("64 clients, %s: %s", duration, res)
	if res.Errors != 0 || res.Requests == 0 {
		t.Fatalf("%d errors in %d requests; first: %s", res.Errors, res.Requests, res.FirstError)
	}
}
