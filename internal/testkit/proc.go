package testkit

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var built struct {
	once sync.Once
	path string
	err  error
}

// Binary builds cmd/3gs once for all the tests of the test binary that
// calls it, which must run them through Main so the build is removed.
func Binary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "3gs-test-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "3gs")
		build := exec.Command("go", "build", "-o", built.path, "./cmd/3gs")
		build.Dir = Root()
		if out, err := build.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// Main runs the tests and removes the binary Binary built; a package's
// TestMain is func TestMain(m *testing.M) { testkit.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	if built.path != "" {
		os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}

// FreeAddr is a loopback address nothing listens on now. Another process
// could take it before the test's binds it; the test then fails at start,
// loudly.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// WaitFor polls cond every 20 ms until it holds, failing the test after
// timeout, which is a deadline for a condition and not a measurement.
func WaitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SyncBuffer is a bytes.Buffer that a server's goroutines may write to
// while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Serving matches the line 3gs serve logs once it listens: the first
// submatch is its host:port.
var Serving = regexp.MustCompile(`msg="serving MCP over HTTP" url=http://(\S+)/mcp`)

// Server is the built binary serving HTTP on a free loopback port.
type Server struct {
	Cmd  *exec.Cmd
	URL  string        // of /mcp
	Done chan struct{} // closed when its stderr ends
	mu   sync.Mutex
	logs strings.Builder
}

// Serve runs `bin serve --http 127.0.0.1:0 args...`, waits until it logs
// the address it serves on, and kills it when the test ends.
func Serve(t testing.TB, bin string, args ...string) *Server {
	t.Helper()
	s := &Server{Cmd: exec.Command(bin, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...), Done: make(chan struct{})}
	stderr, _ := s.Cmd.StderrPipe()
	if err := s.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Cmd.Process.Kill(); s.Cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		defer close(s.Done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.mu.Lock()
			if s.logs.Len() < 1<<20 { // a load test logs far more; keep the start
				s.logs.WriteString(sc.Text() + "\n")
			}
			s.mu.Unlock()
			if m := Serving.FindStringSubmatch(sc.Text()); m != nil {
				found <- "http://" + m[1] + "/mcp"
			}
		}
		close(found)
	}()
	url, ok := <-found
	if !ok {
		t.Fatalf("the server exited before serving:\n%s", s.Stderr())
	}
	s.URL = url
	return s
}

// Stderr is what the server has logged so far (its first MiB).
func (s *Server) Stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// Long skips a test under -short, saying why it is long (what it waits
// for or how much it does); the full run (go test ./..., as CI runs it)
// runs it.
func Long(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("skipped under -short: %s; the full run (go test ./..., as CI runs it) covers it", why)
	}
}
