package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A process the test started is killed with the processes it started: a
// killed nginx master leaves its workers running, holding their ports,
// unless they are killed too.
func TestKillEndsTheProcessTree(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here to find a process's children")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	p := Start(t, t.TempDir(), "tree", sh, "-c", "sleep 300 & echo started $!; wait")
	m := p.WaitLog(t, regexp.MustCompile(`started (\d+)`), 0, 30*time.Second)
	child, _ := strconv.Atoi(m[1])
	if got := Descendants(p.Cmd.Process.Pid); len(got) != 1 || got[0] != child {
		t.Fatalf("descendants of the shell: %v, want [%d]", got, child)
	}
	p.Kill()
	WaitFor(t, "the shell's child to end with it", 10*time.Second, func() bool { return !running(child) })
}

// running says whether process pid exists and is not a zombie.
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}
