package safefile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// A second lock on the same file fails at once, naming the holder, until
// the first is released. Two opens of the lock file in one process are
// separate locks to flock, so this stands for two processes; the helper
// process below checks the real thing.
func TestTryLock(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("advisory locks are not used on Windows")
	}
	path := filepath.Join(t.TempDir(), "registry.json")
	first, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = TryLock(path)
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second lock: %v, want ErrHeld naming this process", err)
	}
	first.Unlock()
	again, err := TryLock(path)
	if err != nil {
		t.Fatalf("after Unlock: %v", err)
	}
	again.Unlock()
}

// The lock holds across processes and ends with its holder.
func TestLockAcrossProcesses(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("advisory locks are not used on Windows")
	}
	if path := os.Getenv("FILELOCK_HOLD"); path != "" {
		if _, err := TryLock(path); err != nil {
			os.Exit(3)
		}
		os.Stdout.Write([]byte("locked\n"))
		os.Stdin.Read(make([]byte, 1)) // hold until the parent closes stdin
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "registry.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockAcrossProcesses$")
	cmd.Env = append(os.Environ(), "FILELOCK_HOLD="+path)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("the child did not lock: %q %v", buf, err)
	}
	_, err := TryLock(path)
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("while the child holds it: %v", err)
	}
	stdin.Close()
	cmd.Wait()
	l, err := TryLock(path)
	if err != nil {
		t.Fatalf("after the child exited: %v", err)
	}
	l.Unlock()
}
