package cli

import (
	"fmt"
	"github.com/three-good-sources/3gs/internal/app"
	"os"
	"path/filepath"
	"time"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/peer"
)

// A read replica: serve --follow URL --follow-pubkey KEY serves the
// registry the origin at URL publishes, verified against KEY, and follows
// its changes (internal/follow).

// followOptions are serve's flags for a read replica.
type followOptions struct {
	url, pubkey, cache string
	refresh            durationFlag
}

func followFlags(f *Flags, o *followOptions) {
	f.StringVar(&o.url, "follow", "THREEGS_FOLLOW", "", "serve as a read replica of the 3gs node (http(s)://host[:port]) or registry URL given: its registry, verified against --follow-pubkey, refreshed every --follow-refresh; curator tools then point to it. Excludes --registry")
	f.StringVar(&o.pubkey, "follow-pubkey", "THREEGS_FOLLOW_PUBKEY", "", "with --follow: the origin curator's key (pk:Z32 or Z32); a copy signed by any other key is refused")
	f.DurationVar(&o.refresh, "follow-refresh", "THREEGS_FOLLOW_REFRESH", "30s", "with --follow: how often to ask the origin again (conditional requests, so an unchanged registry costs a 304); at least 1s")
	f.StringVar(&o.cache, "follow-cache", "THREEGS_FOLLOW_CACHE", "", "with --follow: directory for the last good copy, checked again when read, so a restart while the origin is down serves it, and for the verified mirror of the origin's audit log that /audit serves; none means the user cache directory")
}

// minFollowRefresh bounds --follow-refresh from below: a replica asking
// more often than this only loads its origin.
const minFollowRefresh = time.Second

// parseFollow reads the --follow flags; nil when not following.
func parseFollow(o *serveOptions) (*app.Follow, error) {
	url := o.follow.url
	if url == "" {
		for _, x := range []struct{ value, flag string }{
			{o.follow.pubkey, "--follow-pubkey (THREEGS_FOLLOW_PUBKEY)"},
			{o.follow.cache, "--follow-cache (THREEGS_FOLLOW_CACHE)"},
		} {
			if x.value != "" {
				return nil, fmt.Errorf("%s applies with --follow only; add --follow URL, or drop it", x.flag)
			}
		}
		return nil, nil
	}
	if o.registry != "" {
		return nil, fmt.Errorf("--follow serves the origin's registry, so --registry (REGISTRY_PATH) cannot be given too; drop one")
	}
	if o.key.file != "" {
		return nil, fmt.Errorf("a read replica holds no curator key: edits go to the origin; drop --key-file (THREEGS_KEY_FILE)")
	}
	if _, _, err := peer.Locate(url); err != nil {
		return nil, fmt.Errorf("--follow (THREEGS_FOLLOW): %v", err)
	}
	if err := fetch.CheckOperatorURL(url); err != nil {
		return nil, fmt.Errorf("--follow (THREEGS_FOLLOW): %v", err)
	}
	c := &app.Follow{URL: url, Cache: o.follow.cache}
	z := o.follow.pubkey
	if z == "" {
		return nil, fmt.Errorf("--follow needs --follow-pubkey (THREEGS_FOLLOW_PUBKEY): the origin curator's key, as its 3gs init or keygen printed it; without it nothing shows the registry is the curator's")
	}
	var err error
	if c.Key, err = curatorkey.ParsePublicKey(z); err != nil {
		return nil, fmt.Errorf("--follow-pubkey (THREEGS_FOLLOW_PUBKEY) %w", err)
	}
	if c.Refresh, err = o.follow.refresh.get(); err != nil {
		return nil, err
	}
	if c.Refresh < minFollowRefresh {
		return nil, fmt.Errorf("--follow-refresh (THREEGS_FOLLOW_REFRESH) must be at least %s, got %s", minFollowRefresh, c.Refresh)
	}
	if c.Cache == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			c.Cache = filepath.Join(dir, "3gs", "follow")
		}
	}
	return c, nil
}
