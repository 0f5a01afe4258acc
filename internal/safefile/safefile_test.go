package safefile

import (
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "registry.json")
	os.WriteFile(file, []byte("12345"), 0o644)
	if data, err := Read(file, 5, "registry"); err != nil || string(data) != "12345" {
		t.Errorf("regular file at the limit: %q %v", data, err)
	}
	if _, err := Read(file, 4, "registry"); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), file+" is 5 bytes, more than the 4-byte limit for a registry") {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing.json"), 5, "registry"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, err := Read(dir, 5, "registry"); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), dir+" is a directory, not a regular file; give the path of the registry itself") {
		t.Errorf("directory: %v", err)
	}
}

// Digest hashes a regular file within its limit as Read would read it,
// and refuses what Read refuses.
func TestDigest(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "registry.json")
	os.WriteFile(file, []byte("12345"), 0o644)
	if sum, err := Digest(file, 5, "registry"); err != nil || sum != sha256.Sum256([]byte("12345")) {
		t.Errorf("regular file at the limit: %x %v", sum, err)
	}
	if _, err := Digest(file, 4, "registry"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := Digest(dir, 5, "registry"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v", err)
	}
	if _, err := Digest(filepath.Join(dir, "missing.json"), 5, "registry"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// /dev/zero never ends and has size 0: it must be refused before reading,
// not read until memory runs out.
func TestReadDevice(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here:", err)
	}
	if _, err := Read("/dev/zero", 1<<20, "registry"); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "/dev/zero is a device") {
		t.Errorf("/dev/zero: %v", err)
	}
}

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
