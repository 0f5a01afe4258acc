package safefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Every append-only file 3gs keeps (the audit log, the proposals file)
// refuses a symbolic link put at its name: the link's target is never
// appended to or cut (issue 44, row 9).
func TestAppendAndCutRefuseASymbolicLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "registry.json.audit.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	err := AppendAt(link, "the audit log", 8, func(w io.Writer) error { _, err := io.WriteString(w, "appended\n"); return err })
	if !errors.Is(err, ErrSymlink) {
		t.Errorf("AppendAt through a symbolic link: %v, want ErrSymlink", err)
	}
	if err := Cut(link, "the audit log", 0); !errors.Is(err, ErrSymlink) {
		t.Errorf("Cut through a symbolic link: %v, want ErrSymlink", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me\n" {
		t.Errorf("the link's target now holds %q", b)
	}
}
