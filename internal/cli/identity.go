package cli

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/identity"
	"github.com/three-good-sources/3gs/internal/tools"
)

// identityFlags are serve's flags for checking the links curators claim
// (curator.links).
func identityFlags(f *Flags) {
	f.String("identity-refresh", "THREEGS_IDENTITY_REFRESH", "24h", "how often to check again each link a curator claims (ours, and each endorsed curator's) for their key, in the background (moved by up to a tenth either way; a failing link is checked again after a sixteenth of it, doubling up to it)")
	f.String("identity-cache", "THREEGS_IDENTITY_CACHE", "", "file that keeps what the link checks found, so a restart reports it at once; none means REGISTRY"+identity.CacheSuffix+" beside the registry file, or identity.json in the peer cache directory")
}

// identityConfig is what identityFlags set, checked.
type identityConfig struct {
	refresh time.Duration
	cache   string // --identity-cache as given
}

// minIdentityRefresh is the shortest --identity-refresh: below it a
// failing site would be asked every few hundred milliseconds.
const minIdentityRefresh = 10 * time.Second

// identityBudget bounds the page bodies the link checks hold at once:
// two checks of at most 2 MiB each, with room to spare.
const identityBudget = 8 << 20

func parseIdentity(f *Flags) (identityConfig, error) {
	d, err := f.Duration("identity-refresh")
	if err != nil {
		return identityConfig{}, err
	}
	if d < minIdentityRefresh {
		return identityConfig{}, fmt.Errorf("--identity-refresh (THREEGS_IDENTITY_REFRESH) must be at least %s, got %s; 24h is the default", minIdentityRefresh, d)
	}
	return identityConfig{refresh: d, cache: f.Value("identity-cache")}, nil
}

// identityCachePath is where the checks' outcome is kept: --identity-cache,
// else beside the registry file, else in the peer cache directory; ""
// (memory only) when there is none.
func identityCachePath(flag, registryPath, peerDir string) string {
	switch {
	case flag != "":
		return flag
	case registryPath != "":
		return registryPath + identity.CacheSuffix
	case peerDir != "":
		return filepath.Join(peerDir, "identity.json")
	}
	return ""
}

// startIdentity checks, in the background until ctx ends, the links our
// curator and each endorsed curator claim, and makes h report what it
// found. The returned channel is closed when the checks have stopped.
func startIdentity(ctx context.Context, h *tools.Handlers, c identityConfig, registryPath, peerDir string, log *slog.Logger) <-chan struct{} {
	client := fetch.New(fetch.Options{HeaderTimeout: identity.DefaultTimeout, Budget: identityBudget,
		UserAgent: "3gs/" + buildVersion() + " (checks that a curator's page holds their key; +https://github.com/three-good-sources/3gs)"})
	checker := identity.New(identity.Config{
		Verifier:  &identity.Verifier{Client: client},
		Refresh:   c.refresh,
		CachePath: identityCachePath(c.cache, registryPath, peerDir),
		Subjects:  h.IdentitySubjects,
		Log:       log,
	})
	h.SetIdentities(checker)
	done := make(chan struct{})
	go func() { defer close(done); checker.Run(ctx) }()
	return done
}
