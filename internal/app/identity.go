package app

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/three-good-sources/3gs/internal/curatorlinks"
	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/tools"
)

// Identity is how the links curators claim (curator.links) are checked:
// how often, and the file that keeps what the checks found ("" for the
// default place, identityCachePath).
type Identity struct {
	Refresh time.Duration
	Cache   string
}

// identityBudget bounds the page bodies the link checks hold at once:
// two checks of at most 2 MiB each, with room to spare.
const identityBudget = 8 << 20

// identityCachePath is where the checks' outcome is kept: --identity-cache,
// else beside the registry file, else in the peer cache directory; ""
// (memory only) when there is none.
func identityCachePath(flag, registryPath, peerDir string) string {
	switch {
	case flag != "":
		return flag
	case registryPath != "":
		return registryPath + curatorlinks.CacheSuffix
	case peerDir != "":
		return filepath.Join(peerDir, "identity.json")
	}
	return ""
}

// newIdentityChecker makes the checker of the links our curator and each
// endorsed curator claim and makes h report what it finds; Run it until
// the server closes.
func newIdentityChecker(h *tools.Handlers, c Identity, version, registryPath, peerDir string, log *slog.Logger) *curatorlinks.Checker {
	client := fetch.New(fetch.Options{HeaderTimeout: curatorlinks.DefaultTimeout, Budget: identityBudget,
		UserAgent: "3gs/" + version + " (checks that a curator's page holds their key; +https://github.com/three-good-sources/3gs)"})
	checker := curatorlinks.New(curatorlinks.Config{
		Verifier:  &curatorlinks.Verifier{Client: client},
		Refresh:   c.Refresh,
		CachePath: identityCachePath(c.Cache, registryPath, peerDir),
		Subjects:  h.IdentitySubjects,
		Log:       log,
	})
	h.SetIdentities(checker)
	return checker
}
