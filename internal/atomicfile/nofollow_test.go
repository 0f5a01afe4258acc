package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteNoFollow creates and replaces a regular file, and refuses a
// symbolic link at the path, leaving both the link and the file it names
// untouched, with no temporary file left behind.
func TestWriteNoFollow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "peer.json")
	if err := WriteNoFollow(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteNoFollow(path, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "two" {
		t.Fatalf("replaced: %q", data)
	}

	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious"), 0o600)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(victim, link); err != nil {
		t.Skip(err)
	}
	err := WriteNoFollow(link, []byte("cache"), 0o644)
	if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), link+" is a symbolic link (to "+victim+")") {
		t.Fatalf("a link: %v", err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "precious" {
		t.Errorf("the linked file was written: %q", data)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".*tmp-*")); len(tmps) != 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
	// A directory is not replaced either.
	os.Mkdir(filepath.Join(dir, "d.json"), 0o755)
	if err := WriteNoFollow(filepath.Join(dir, "d.json"), []byte("x"), 0o644); err == nil {
		t.Error("a directory was replaced")
	}
}
