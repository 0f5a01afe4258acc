package testkit

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// FreeAddr is a loopback address nothing listens on now, for a program
// that must be told its port before it starts (nginx, HAProxy); a 3gs
// server is started on 127.0.0.1:0 and reports its own. The port is
// taken below the system's ephemeral range, where no bind of port 0 and
// no outgoing connection is given one, so a server another test starts
// meanwhile cannot be handed it (some kernels give the port just closed
// to the next bind of port 0); and no two calls in one test binary
// return the same address. Another program could still take the port
// before the test's binds it; the test then fails at start, loudly.
func FreeAddr(t testing.TB) string {
	t.Helper()
	freeAddrs.Lock()
	defer freeAddrs.Unlock()
	if freeAddrs.given == nil {
		freeAddrs.given = map[string]bool{}
	}
	lo := ephemeralLow()
	for range 200 {
		port := 0 // the system's choice, when the range is unknown
		if lo > minFreePort {
			port = minFreePort + rand.IntN(lo-minFreePort)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			if port == 0 {
				t.Fatal(err)
			}
			continue // in use
		}
		addr := l.Addr().String()
		l.Close()
		if !freeAddrs.given[addr] {
			freeAddrs.given[addr] = true
			return addr
		}
	}
	t.Fatal("FreeAddr: no free loopback port found in 200 tries")
	return ""
}

// minFreePort is the lowest port FreeAddr picks: above the well-known
// and the commonly registered services' ports.
const minFreePort = 20000

// ephemeralLow is the lowest port of the system's ephemeral range, or 0
// when it cannot be read (not Linux).
func ephemeralLow() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) != 2 {
		return 0
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return lo
}

var freeAddrs struct {
	sync.Mutex
	given map[string]bool
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

// Proc is a process the test started, its output going to a file.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	Log  string        // the file its stdout and stderr go to
	Done chan struct{} // closed once it has exited
}

// Start runs bin with args, its stdout and stderr in dir/name.log. It is
// killed when the test ends, and its log, less routine lines, is shown if
// the test failed.
func Start(t testing.TB, dir, name, bin string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Name: name, Log: filepath.Join(dir, name+".log"), Done: make(chan struct{})}
	f, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "### %s %s\n", bin, strings.Join(args, " "))
	p.Cmd = exec.Command(bin, args...)
	p.Cmd.Stdout, p.Cmd.Stderr = f, f
	if err := p.Cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("%s: %v", name, err)
	}
	go func() {
		p.Cmd.Wait()
		f.Close()
		close(p.Done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("--- %s log (%s), routine lines left out:\n%s", name, p.Log, NotableLines(p.Log, 150))
		}
	})
	return p
}

// Kill ends the process with SIGKILL, and the processes it started
// (nginx's workers outlive a killed master), and waits for it.
func (p *Proc) Kill() {
	children := Descendants(p.Cmd.Process.Pid)
	p.Cmd.Process.Kill()
	// Killed after the parent, which would otherwise start new ones.
	for _, pid := range children {
		if c, err := os.FindProcess(pid); err == nil {
			c.Kill()
		}
	}
	<-p.Done
}

// Descendants is the ids of the processes pid started, and theirs, as
// /proc lists them now; none where there is no /proc.
func Descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], id)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// Exited says whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.Done:
		return true
	default:
		return false
	}
}

// LogSize is how much the process has logged so far, for WaitLog to read
// only what comes after it.
func (p *Proc) LogSize() int {
	fi, err := os.Stat(p.Log)
	if err != nil {
		return 0
	}
	return int(fi.Size())
}

// WaitLog polls the process's log, from byte from on, until re matches,
// and returns the submatches; it fails if the process exits first or
// nothing matches within timeout.
func (p *Proc) WaitLog(t testing.TB, re *regexp.Regexp, from int, timeout time.Duration) []string {
	t.Helper()
	var m []string
	WaitFor(t, fmt.Sprintf("%s: a log line matching %q", p.Name, re), timeout, func() bool {
		data, _ := os.ReadFile(p.Log)
		if from < len(data) {
			if m = re.FindStringSubmatch(string(data[from:])); m != nil {
				return true
			}
		}
		if p.Exited() {
			t.Fatalf("%s exited before its log showed %q", p.Name, re)
		}
		return false
	})
	return m
}

// routineAccess matches a 3gs access log line for a request that went
// well.
var routineAccess = regexp.MustCompile(` msg=http .* status=(2\d\d|304) `)

// NotableLines is the last max lines of a log that are not routine: a
// follower logs every answered call, which would bury what went wrong.
func NotableLines(path string, max int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var keep []string
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if routineAccess.MatchString(line) {
			continue
		}
		keep = append(keep, line)
	}
	if len(keep) > max {
		keep = append([]string{fmt.Sprintf("(%d earlier lines left out)", len(keep)-max)}, keep[len(keep)-max:]...)
	}
	return strings.Join(keep, "\n")
}

// inCI says whether the tests run in CI, where a missing tool fails a
// test instead of skipping it: a skip there would hide that what the test
// covers was never exercised.
func inCI() bool { return os.Getenv("CI") != "" }

// NeedDebianPackage returns the path of the program name, which Debian's
// package of the same name installs (haproxy, nginx). When it is missing
// the test installs the package if it may (as root, in CI or with
// THREEGS_E2E_INSTALL=1); elsewhere it skips, saying how to enable it. In
// CI a failed install fails the test.
func NeedDebianPackage(t testing.TB, name string) string {
	t.Helper()
	find := func() string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		// /usr/sbin is often not on an unprivileged user's PATH.
		if p := filepath.Join("/usr/sbin", name); fileExists(p) {
			return p
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	if os.Geteuid() != 0 || (!inCI() && os.Getenv("THREEGS_E2E_INSTALL") != "1") {
		t.Skipf("%s is not installed: install it (apt-get install %s), or run this test as root with THREEGS_E2E_INSTALL=1 to let it install Debian's package itself (CI does)", name, name)
	}
	err := aptInstall(name)
	p := find()
	if err == nil && p == "" {
		err = fmt.Errorf("apt-get installed %s, but no %s binary is on PATH or in /usr/sbin", name, name)
	}
	if err != nil {
		if inCI() {
			t.Fatalf("%s could not be installed: %v", name, err)
		}
		t.Skipf("%s could not be installed, so what this test checks with it is not tested: %v", name, err)
	}
	t.Logf("installed Debian's %s package: %s", name, p)
	return p
}

// aptInstall installs Debian's package pkg, refreshing the package lists
// once if the first try fails: a new machine may have none yet, or stale
// ones.
func aptInstall(pkg string) error {
	apt := func(args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	install := []string{"install", "-y", "--no-install-recommends", pkg}
	err := apt(install...)
	if err != nil {
		if err = apt("update"); err == nil {
			err = apt(install...)
		}
	}
	return err
}

// NeedNodePackage returns the node binary, skipping (failing in CI) when
// the npm package pkg is not installed under dir/node_modules; install
// is the command that installs it, for the message.
func NeedNodePackage(t testing.TB, dir, pkg, install string) string {
	t.Helper()
	if !fileExists(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))) {
		msg := pkg + " is not installed; run: " + install
		if inCI() {
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

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
