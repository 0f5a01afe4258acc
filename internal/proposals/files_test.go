package proposals

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/safefile"
)

// A proposals file swapped for a symbolic link while the server runs must
// not be appended through: the target is a copy of the file, the same
// length, so the length check alone would not stop the write.
func TestAppendRefusesASymbolicLinkSwappedIn(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json"+Suffix)
	s := open(t, path, Options{Now: func() time.Time { return t0 }})
	if _, err := s.Add(report("a")); err != nil {
		t.Fatal(err)
	}
	was, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "someone-elses-file")
	if err := os.WriteFile(target, was, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	_, err = s.Add(report("b"))
	if !errors.Is(err, safefile.ErrSymlink) {
		t.Errorf("Add through a symbolic link: err = %v, want one wrapping safefile.ErrSymlink", err)
	}
	if after, _ := os.ReadFile(target); string(after) != string(was) {
		t.Errorf("the link's target was written:\n%s", after)
	}
}

func TestOpenRefusesASymbolicLink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json"+Suffix)
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(path, Options{}); !errors.Is(err, safefile.ErrSymlink) {
		t.Errorf("Open of a symbolic link: err = %v, want one wrapping safefile.ErrSymlink", err)
	}
	if _, err := Read(path); !errors.Is(err, safefile.ErrSymlink) {
		t.Errorf("Read of a symbolic link: err = %v, want one wrapping safefile.ErrSymlink", err)
	}
}

// The lock file is cut and written with the holder's pid: a link there
// must not cut the file it names.
func TestLockRefusesASymbolicLink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json"+Suffix)
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path+safefile.Suffix); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(path, Options{}); !errors.Is(err, safefile.ErrSymlink) {
		t.Errorf("Open with a linked lock file: err = %v, want one wrapping safefile.ErrSymlink", err)
	}
	if after, _ := os.ReadFile(target); string(after) != "keep me\n" {
		t.Errorf("the lock file's link target was written: %q", after)
	}
}
