//go:build unix

package safefile

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A named pipe with no writer blocks a plain open for good; Read must
// refuse it at once. If it blocked, the test would hang until go test's
// own timeout, which is the failure.
func TestReadNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "registry.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("cannot make a named pipe here:", err)
	}
	if _, err := Read(fifo, 1<<20, "registry"); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), fifo+" is a named pipe") {
		t.Errorf("named pipe: %v", err)
	}
}
