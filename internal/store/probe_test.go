package store

import (
	"os"
	"path/filepath"
	"testing"
)

// A file can be created in a writable folder, and the probe leaves
// nothing behind; not in a folder that does not exist.
func TestCanCreateIn(t *testing.T) {
	dir := t.TempDir()
	if !CanCreateIn(dir) {
		t.Fatalf("CanCreateIn(%s) = false for a new temporary folder", dir)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the probe left %v (%v)", entries, err)
	}
	if CanCreateIn(filepath.Join(dir, "missing")) {
		t.Error("CanCreateIn is true for a folder that does not exist")
	}
}
