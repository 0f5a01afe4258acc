package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A new file gets perm; an existing one keeps the mode its owner gave it
// (writes used to widen a 0640 registry to 0644).
func TestWriteReplacesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "registry.json")
	if err := Write(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("new file: mode %v, want 0600", st.Mode().Perm())
	}
	os.Chmod(path, 0o640)
	if err := Write(path, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "two" {
		t.Fatalf("content %q, %v; want two", got, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v after a write, want the file's own 0640", st.Mode().Perm())
	}
	assertNoTemporaries(t, dir, 1)
}

// A write through a symbolic link replaces the file it names and leaves
// the link a link; a link to nothing, or to something that is not a
// regular file, is refused with what it points at.
func TestWriteThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "data", "registry.json")
	os.Mkdir(filepath.Dir(real), 0o755)
	os.WriteFile(real, []byte("one"), 0o640)
	link := filepath.Join(dir, "registry.json")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("symbolic links are not available here:", err)
	}
	if err := Write(link, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link became a %v", fi.Mode().Type())
	}
	if got, _ := os.ReadFile(real); string(got) != "two" {
		t.Errorf("the linked file holds %q, want two", got)
	}
	if st, _ := os.Stat(real); st.Mode().Perm() != 0o640 {
		t.Errorf("the linked file's mode became %v", st.Mode().Perm())
	}
	dangling := filepath.Join(dir, "dangling.json")
	os.Symlink(filepath.Join(dir, "nowhere.json"), dangling)
	if err := Write(dangling, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "nowhere.json, which does not exist") {
		t.Errorf("a dangling link: %v", err)
	}
	toDir := filepath.Join(dir, "dir.json")
	os.Symlink(filepath.Dir(real), toDir)
	if err := Write(toDir, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a link to a directory: %v", err)
	}
}

func TestCreateNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "curator.key")
	if err := Create(path, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Create(path, []byte("second"), 0o600)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second Create: %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "first" {
		t.Errorf("content %q, want first", got)
	}
	assertNoTemporaries(t, dir, 1)
}

// Of many processes racing to create the same file, exactly one wins and
// the file holds that one's content whole.
func TestCreateRace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	var wg sync.WaitGroup
	wins := make(chan string, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := string(rune('a'+i)) + "-content"
			if Create(path, []byte(data), 0o600) == nil {
				wins <- data
			}
		}()
	}
	wg.Wait()
	close(wins)
	var won []string
	for w := range wins {
		won = append(won, w)
	}
	if len(won) != 1 {
		t.Fatalf("%d creators won, want exactly 1", len(won))
	}
	if got, _ := os.ReadFile(path); string(got) != won[0] {
		t.Errorf("file holds %q, the winner wrote %q", got, won[0])
	}
	assertNoTemporaries(t, dir, 1)
}

func TestWriteIntoMissingDirectoryFails(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "no", "such", "file"), []byte("x"), 0o644); err == nil {
		t.Fatal("want an error for a missing directory")
	}
}

func assertNoTemporaries(t *testing.T, dir string, want int) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != want {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want %d file(s) and no temporaries", names, want)
	}
}

// A write interrupted after the new content is on disk but before the
// rename (a crash at that point) leaves the original whole; the stray
// temporary file has another name, so no reader of path ever sees it.
func TestInterruptedBeforeRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "registry.json")
	if err := Write(path, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp, err := stage(path, []byte("half-way"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "original" {
		t.Errorf("after an interrupted write the file holds %q", got)
	}
	if filepath.Dir(tmp) != dir || filepath.Base(tmp) == filepath.Base(path) {
		t.Errorf("temporary file %s", tmp)
	}
	// The next write still succeeds.
	if err := Write(path, []byte("next"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "next" {
		t.Errorf("got %q", got)
	}
}

// RemoveStale takes the old temporaries of a path and of the files named
// after it, and leaves young ones (a write in progress elsewhere), other
// files' temporaries and everything else.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "reg[1].json")
	now := time.Now()
	old := now.Add(-2 * StaleAge)
	files := map[string]bool{ // name → removed
		".reg[1].json.tmp-111":          true,
		".reg[1].json.sig.next.tmp-222": true,
		".reg[1].json.tmp-young":        false,
		".other.json.tmp-333":           false,
		"reg[1].json":                   false,
		".reg[1].json.audit.jsonl":      false,
	}
	for name := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if name != ".reg[1].json.tmp-young" {
			os.Chtimes(p, old, old)
		}
	}
	n, err := RemoveStale(path, now)
	if err != nil || n != 2 {
		t.Errorf("removed %d, %v; want 2", n, err)
	}
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := errors.Is(err, fs.ErrNotExist); gone != removed {
			t.Errorf("%s: removed %v, want %v", name, gone, removed)
		}
	}
}

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
