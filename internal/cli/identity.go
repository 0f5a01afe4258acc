package cli

import (
	"fmt"
	"time"

	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/curatorlinks"
)

// identityOptions are serve's flags for checking the links curators
// claim (curator.links).
type identityOptions struct {
	refresh durationFlag
	cache   string
}

func identityFlags(f *Flags) {
	o := options[identityOptions](f)
	f.DurationVar(&o.refresh, "identity-refresh", "THREEGS_IDENTITY_REFRESH", "24h", "how often to check again each link a curator claims (ours, and each endorsed curator's) for their key, in the background (moved by up to a tenth either way; a failing link is checked again after a sixteenth of it, doubling up to it)")
	f.StringVar(&o.cache, "identity-cache", "THREEGS_IDENTITY_CACHE", "", "file that keeps what the link checks found, so a restart reports it at once; none means REGISTRY"+curatorlinks.CacheSuffix+" beside the registry file, or identity.json in the peer cache directory")
}

// minIdentityRefresh is the shortest --identity-refresh: below it a
// failing site would be asked every few hundred milliseconds.
const minIdentityRefresh = 10 * time.Second

// parseIdentity checks identityFlags' values.
func parseIdentity(f *Flags) (app.Identity, error) {
	o := options[identityOptions](f)
	d, err := o.refresh.get()
	if err != nil {
		return app.Identity{}, err
	}
	if d < minIdentityRefresh {
		return app.Identity{}, fmt.Errorf("--identity-refresh (THREEGS_IDENTITY_REFRESH) must be at least %s, got %s; 24h is the default", minIdentityRefresh, d)
	}
	return app.Identity{Refresh: d, Cache: o.cache}, nil
}
