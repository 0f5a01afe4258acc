package peer

import (
	"os"
	"strings"
	"testing"
)

// A symbolic link at a peer's cache path, pointing at another file, is
// neither read nor written through: the peer is fetched as if nothing
// were cached, the copy serves from memory, the other file keeps its
// bytes, and the log says why the cache was refused and not written.
func TestCacheSymlinkRefused(t *testing.T) {
	dir := t.TempDir()
	victim := t.TempDir() + "/victim.json"
	const precious = `{"precious": true}`
	if err := os.WriteFile(victim, []byte(precious), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, withCache(dir))
	if err := os.Symlink(victim, cachePath(dir, h.peer.uri)); err != nil {
		t.Skip(err)
	}
	h.endorse()
	if p := h.only(); p.Copy != nil || !strings.Contains(p.Reason, "is a symbolic link (to "+victim+")") {
		t.Errorf("the linked file was read as the cache: %+v", p)
	}
	h.accept("1.0.0")
	if data, _ := os.ReadFile(victim); string(data) != precious {
		t.Errorf("the file the link names was overwritten: %.80q", data)
	}
	if fi, err := os.Lstat(cachePath(dir, h.peer.uri)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	log := h.log.String()
	for _, want := range []string{`msg="peer cache refused"`, `msg="peer cache not written; the copy serves from memory"`, "refusing to write through it"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}
}
