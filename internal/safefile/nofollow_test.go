package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadNoFollow reads a regular file, and refuses a symbolic link, to a
// file or to nothing, naming it and where it points.
func TestReadNoFollow(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cache.json")
	other := filepath.Join(dir, "secret")
	os.WriteFile(file, []byte("mine"), 0o644)
	os.WriteFile(other, []byte("not mine"), 0o600)
	if data, err := ReadNoFollow(file, 100, "peer cache file"); err != nil || string(data) != "mine" {
		t.Fatalf("a regular file: %q %v", data, err)
	}
	for _, target := range []string{other, filepath.Join(dir, "missing")} {
		link := filepath.Join(dir, "link.json")
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Skip(err)
		}
		data, err := ReadNoFollow(link, 100, "peer cache file")
		if !errors.Is(err, ErrSymlink) || data != nil || !strings.Contains(err.Error(), link+" is a symbolic link (to "+target+")") || !strings.Contains(err.Error(), "Remove the link") {
			t.Errorf("a link to %s: %q %v", target, data, err)
		}
	}
	if _, err := ReadNoFollow(filepath.Join(dir, "none"), 100, "peer cache file"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want not-exist", err)
	}
}
