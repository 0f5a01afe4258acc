package store_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/store"
)

// lostLog is a node whose registry has been changed once (a two-entry
// log), with its log deleted: it returns the copy a replica or a static
// host would still hold.
func lostLog(t *testing.T) (*node, []byte) {
	t.Helper()
	n := newNode(t)
	c, _ := n.change(t, n.openLog(t))
	if _, err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	published, err := os.ReadFile(n.log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(n.log); err != nil {
		t.Fatal(err)
	}
	return n, published
}

func TestRestoreLogFromACopy(t *testing.T) {
	n, published := lostLog(t)
	head, err := store.RestoreLog(n.path, n.log, bytes.NewReader(published))
	if err != nil {
		t.Fatal(err)
	}
	if head.Seq != 2 {
		t.Errorf("restored up to %v, want seq 2", head)
	}
	mustHold(t, n.log, published)
	if fi, err := os.Stat(n.log); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("restored log: %v, %v; want mode 600", fi, err)
	}
	reg, err := registry.LoadFile(n.path)
	if err != nil {
		t.Fatal(err)
	}
	pub := curatorkey.Public(n.key)
	if _, _, err := store.OpenLog(store.LogOptions{Path: n.log, Key: pub, SHA256: reg.SHA256(), Covered: store.CoveredHead(n.path, reg, pub)}); err != nil {
		t.Errorf("the restored log does not open as the registry's: %v", err)
	}
}

// A copy that goes on past the head the registry's signature covers (the
// origin changed the registry again after this copy of it was signed) is
// restored up to that head only.
func TestRestoreLogStopsAtTheSignedHead(t *testing.T) {
	n, published := lostLog(t)
	extra := bytes.Repeat([]byte("not read\n"), 3)
	if _, err := store.RestoreLog(n.path, n.log, bytes.NewReader(append(published, extra...))); err != nil {
		t.Fatal(err)
	}
	mustHold(t, n.log, published)
}

// What is refused leaves no log behind, and an existing log untouched.
func TestRestoreLogRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		copy func([]byte) []byte
		want string
	}{
		{"a copy cut short", func(p []byte) []byte { return p[:bytes.IndexByte(p, '\n')+1] }, "not this registry's log"},
		{"a tampered entry", func(p []byte) []byte { return bytes.Replace(p, []byte("testing-things"), []byte("testing-thingz"), 1) }, "not this registry's log"},
		{"another log", func([]byte) []byte { return nil }, "not this registry's log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, published := lostLog(t)
			_, err := store.RestoreLog(n.path, n.log, bytes.NewReader(tc.copy(published)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
			if _, err := os.Lstat(n.log); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused restore left %s: %v", n.log, err)
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(n.log), "."+filepath.Base(n.log)+"*")); len(left) > 0 {
				t.Errorf("a refused restore left %v", left)
			}
		})
	}
	t.Run("a log already there", func(t *testing.T) {
		n, published := lostLog(t)
		if err := os.WriteFile(n.log, []byte("mine\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := store.RestoreLog(n.path, n.log, bytes.NewReader(published)); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("got %v, want fs.ErrExist", err)
		}
		mustHold(t, n.log, []byte("mine\n"))
	})
}
