package cli

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestServeHTTPFlagErrors: a wrong HTTP setting stops serve with exit 2 and
// a message naming the flag, its environment twin and the fix.
func TestServeHTTPFlagErrors(t *testing.T) {
	cases := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"serve", "--allow-origin", "https://app.example.com"}, "--allow-origin (THREEGS_ALLOW_ORIGIN) applies to HTTP only; add --http ADDR"},
		{nil, []string{"serve", "--public-url", "https://mcp.example.com"}, "applies to HTTP only"},
		{nil, []string{"serve", "--http", "3000000"}, "--http (THREEGS_HTTP): port 3000000 is out of range (1-65535)"},
		{nil, []string{"serve", "--http", "mcp.example.com"}, `--http (THREEGS_HTTP) "mcp.example.com" is not an address to listen on; write HOST:PORT`},
		{map[string]string{"THREEGS_HTTP": "localhost"}, []string{"serve"}, `--http (THREEGS_HTTP) "localhost" is not an address to listen on; write HOST:PORT`},
		{nil, []string{"serve", "--http", "127.0.0.1:0", "--allow-origin", "app.example.com"}, `"app.example.com" is not an origin`},
		{nil, []string{"serve", "--http", "127.0.0.1:0", "--allow-origin", "https://app.example.com/path"}, "is not an origin"},
		{nil, []string{"serve", "--http", "127.0.0.1:0", "--max-concurrent", "0"}, "--max-concurrent (THREEGS_MAX_CONCURRENT) must be a whole number of at least 1"},
		{map[string]string{"THREEGS_MAX_SESSIONS": "many"}, []string{"serve", "--http", "127.0.0.1:0"}, "--max-sessions (THREEGS_MAX_SESSIONS)"},
		{nil, []string{"serve", "--http", "127.0.0.1:0", "--session-idle-timeout", "30"}, "must be a positive duration such as 30s"},
		{nil, []string{"serve", "--http", "127.0.0.1:0", "--shutdown-timeout", "-1s"}, "--shutdown-timeout (THREEGS_SHUTDOWN_TIMEOUT)"},
		{nil, []string{"serve", "--http", "127.0.0.1:0", "--public-url", "mcp.example.com"}, "--public-url (THREEGS_PUBLIC_URL) must start with http:// or https://"},
	}
	for _, c := range cases {
		code, _, stderr := run(t, c.env, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want exit 2 and %q", c.env, c.args, code, stderr, c.want)
		}
	}
}

// syncWriter is a buffer serve may write to while the test reads it.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
	ch chan struct{} // signalled on every write
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.ch <- struct{}{}:
	default:
	}
	return w.b.Write(p)
}

func (w *syncWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.b.String() }

// TestServeHTTP runs serve --http in-process: it answers /health once
// loaded, and returns 0 when its context ends (SIGTERM in the binary).
func TestServeHTTP(t *testing.T) {
	stderr := &syncWriter{ch: make(chan struct{}, 1)}
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"serve", "--http", "0"}, env) }() // a bare port: loopback
	serving := regexp.MustCompile(`msg="serving MCP over HTTP" url=http://(127\.0\.0\.1:\d+)/mcp`)
	var addr string
	for addr == "" {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d:\n%s", code, stderr.String())
		case <-stderr.ch:
		}
		if m := serving.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
	}
	resp, err := http.Get("http://" + addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"verified": true`) {
		t.Errorf("/health: %d %s", resp.StatusCode, body)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("exit %d after the context ended:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "all requests finished") {
		t.Errorf("no drain message:\n%s", stderr.String())
	}
}

// TestServeHTTPBadRegistry: when the registry cannot be loaded after the
// port is bound, serve still exits 1 with the reason.
func TestServeHTTPBadRegistry(t *testing.T) {
	code, _, stderr := run(t, nil, "serve", "--http", "127.0.0.1:0", "--registry", "/nonexistent/registry.json")
	if code != ExitFail || !strings.Contains(stderr, "/nonexistent/registry.json does not exist") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
}
