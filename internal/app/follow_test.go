package app

import (
	"path/filepath"
	"testing"
)

// Where peers' copies are cached: --peer-cache, else beside the registry
// file, else, for a read replica, in its --follow-cache (not the user
// cache directory, which a replica given a cache of its own must not
// write to).
func TestPeerCacheDir(t *testing.T) {
	for _, c := range []struct{ flag, reg, follow, want string }{
		{"/p", "/r/registry.json", "/f", "/p"},
		{"", "/r/registry.json", "", "/r/registry.json.peers"},
		{"", "", "/f", filepath.Join("/f", "peers")},
	} {
		if got := PeerCacheDir(c.flag, c.reg, c.follow); got != c.want {
			t.Errorf("PeerCacheDir(%q, %q, %q) = %q, want %q", c.flag, c.reg, c.follow, got, c.want)
		}
	}
}
