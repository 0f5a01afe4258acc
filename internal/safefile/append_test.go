package safefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func appendString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// started is a file at a new path holding "one\n", written by AppendAt.
func started(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	if err := AppendAt(path, "the log", 0, appendString("one\n")); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustHold(t *testing.T, path, want string) {
	t.Helper()
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Fatalf("the file holds %q, want %q", b, want)
	}
}

// A file another program grew is refused with ErrNotAsLeft, untouched.
func TestAppendAtRefusesAFileNotAsLeft(t *testing.T) {
	path := started(t)
	err := AppendAt(path, "the log", 0, appendString("two\n"))
	if !errors.Is(err, ErrNotAsLeft) {
		t.Fatalf("got %v, want ErrNotAsLeft", err)
	}
	mustHold(t, path, "one\n")
}

// A write that fails part way is cut back to where it started.
func TestAppendAtCutsBackAFailedWrite(t *testing.T) {
	path := started(t)
	full := errors.New("disk full")
	err := AppendAt(path, "the log", 4, func(w io.Writer) error {
		io.WriteString(w, "tw")
		return full
	})
	if !errors.Is(err, full) {
		t.Fatalf("got %v", err)
	}
	mustHold(t, path, "one\n")
}

// Cut keeps the first size bytes.
func TestCutKeepsTheStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	os.WriteFile(path, []byte("one\ntwo\n"), 0o600)
	if err := Cut(path, "the file", 4); err != nil {
		t.Fatal(err)
	}
	mustHold(t, path, "one\n")
}
