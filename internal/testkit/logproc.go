package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

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

// Kill ends the process with SIGKILL and waits for it.
func (p *Proc) Kill() {
	p.Cmd.Process.Kill()
	<-p.Done
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
