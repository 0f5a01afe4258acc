package cli

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/follow"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/tools"
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
	f.StringVar(&o.cache, "follow-cache", "THREEGS_FOLLOW_CACHE", "", "with --follow: directory for the last good copy, checked again when read, so a restart while the origin is down serves it; none means the user cache directory")
}

// followConfig is --follow and its companions, checked.
type followConfig struct {
	url     string
	key     ed25519.PublicKey
	refresh time.Duration
	cache   string
}

// minFollowRefresh bounds --follow-refresh from below: a replica asking
// more often than this only loads its origin.
const minFollowRefresh = time.Second

// parseFollow reads the --follow flags; nil when not following.
func parseFollow(o *serveOptions) (*followConfig, error) {
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
	c := &followConfig{url: url, cache: o.follow.cache}
	z := o.follow.pubkey
	if z == "" {
		return nil, fmt.Errorf("--follow needs --follow-pubkey (THREEGS_FOLLOW_PUBKEY): the origin curator's key, as its 3gs init or keygen printed it; without it nothing shows the registry is the curator's")
	}
	var err error
	if c.key, err = pkarr.ParsePublicKey(z); err != nil {
		return nil, fmt.Errorf("--follow-pubkey (THREEGS_FOLLOW_PUBKEY) %w", err)
	}
	if c.refresh, err = o.follow.refresh.get(); err != nil {
		return nil, err
	}
	if c.refresh < minFollowRefresh {
		return nil, fmt.Errorf("--follow-refresh (THREEGS_FOLLOW_REFRESH) must be at least %s, got %s", minFollowRefresh, c.refresh)
	}
	if c.cache == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			c.cache = filepath.Join(dir, "3gs", "follow")
		}
	}
	return c, nil
}

// startFollowing gets the first copy to serve, from the origin or the
// cache, and returns it as served with the follower that keeps it current.
func startFollowing(ctx context.Context, env *Env, c *serveConfig, allowExpired bool) (*served, *follow.Follower, bool) {
	fc := c.follow
	fl := follow.New(follow.Config{
		URL: fc.url, Key: fc.key, Refresh: fc.refresh, CacheDir: fc.cache,
		Fetcher: c.peers.Fetcher, AllowExpired: allowExpired, Log: c.log,
	})
	first, err := fl.Start(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs serve: %v\nFix: check that %s answers (its /registry and /registry.sig for a node URL) and that --follow-pubkey is its curator's key; a replica that once served a copy keeps it in --follow-cache and starts from it when the origin is down.\n", err, fc.url)
		return nil, nil, false
	}
	return &served{
		reg: first.Registry, name: "the registry followed from " + fc.url,
		sig:      signature.Check(first.Registry, first.Signature),
		files:    signature.Files{Where: "followed from " + fc.url + ": download them from this server, or from the origin"},
		modified: first.FetchedAt,
	}, fl, true
}

// followPublisher swaps a follower's new copy into h, with a matcher
// built for it.
func followPublisher(h *tools.Handlers, c *serveConfig) func(*peer.Copy) {
	return func(cp *peer.Copy) {
		h.Serve(cp.Registry, cp.Signature, c.newMatcher(cp.Registry), cp.FetchedAt)
	}
}

// followHealth is /health's follow object for fl.
func followHealth(fl *follow.Follower, now func() time.Time) func() *gen.HealthFollow {
	return func() *gen.HealthFollow {
		st := fl.State()
		out := &gen.HealthFollow{Origin: st.Origin, Status: gen.HealthFollowStatus(st.Status)}
		if out.Status == "" {
			out.Status = gen.HealthFollowStatusFresh
		}
		if st.Served != nil {
			out.Version = st.Served.Registry.Version()
		}
		// The coarse reason only; the full one is in the log.
		if r := tools.PublicReason(string(st.Status), st.Public); r != "" {
			out.Reason = (*gen.HealthFollowReason)(&r)
		}
		stamp := func(t time.Time) *string {
			if t.IsZero() {
				return nil
			}
			s := t.UTC().Format(time.RFC3339)
			return &s
		}
		out.LastCheck, out.LastSuccess = stamp(st.LastCheck), stamp(st.LastSuccess)
		// Since the origin last confirmed what is served; a copy served
		// from the cache counts from when it was fetched.
		since := st.LastSuccess
		if since.IsZero() && st.Served != nil {
			since = st.Served.FetchedAt
		}
		if !since.IsZero() {
			out.BehindSeconds = int(max(0, now().Sub(since)) / time.Second)
		}
		// Nothing is served from an expired copy; registry.expires says when.
		if st.Expired {
			out.Expired = &st.Expired
		}
		return out
	}
}
