package app

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/follow"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/tools"
)

// Follow is a read replica's origin: serve --follow URL --follow-pubkey
// KEY serves the registry the origin at URL publishes, verified against
// KEY, and follows its changes (internal/follow).
type Follow struct {
	URL     string
	Key     ed25519.PublicKey
	Refresh time.Duration
	// Cache is the directory for the last good copy.
	Cache string
}

// startFollowing gets the first copy to serve, from the origin or the
// cache, and returns it as served with the follower that keeps it current.
func startFollowing(ctx context.Context, c *Config) (*Served, *follow.Follower, error) {
	fc := c.Follow
	fl := follow.New(follow.Config{
		URL: fc.URL, Key: fc.Key, Refresh: fc.Refresh, CacheDir: fc.Cache,
		// --follow is the operator's URL: it may name a literal private
		// address (an origin on the same network).
		Fetcher: c.Peers.Fetcher.AsOperator(true), AllowExpired: c.AllowExpired, Log: c.Log,
		Mirror: openMirror(c), Fix: PeerFix,
	})
	first, err := fl.Start(ctx)
	if err != nil && fl.State().Public == fetch.RefusedAddress {
		return nil, nil, fmt.Errorf("%v\nFix: an origin outside the public Internet (loopback, private) is reached only when --follow names its address as a literal IP: write the IP address of %s in place of its name (localhost is 127.0.0.1).", err, fc.URL)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%v\nFix: check that %s answers (its /registry and /registry.sig for a node URL) and that --follow-pubkey is its curator's key; a replica that once served a copy keeps it in --follow-cache and starts from it when the origin is down.", err, fc.URL)
	}
	return &Served{
		Reg: first.Registry, Name: "the registry followed from " + fc.URL,
		Sig:      signature.Check(first.Registry, first.Signature),
		Files:    signature.Files{Where: "followed from " + fc.URL + ": download them from this server, or from the origin"},
		Modified: first.FetchedAt,
	}, fl, nil
}

// openMirror opens the replica's mirror of the origin's audit log in its
// cache, or returns nil (the replica then answers that the origin keeps
// the log) when there is no cache or the mirror cannot be opened.
func openMirror(c *Config) *follow.Mirror {
	fc := c.Follow
	if fc.Cache == "" {
		return nil
	}
	m, note, err := follow.OpenMirror(follow.MirrorPath(fc.Cache, fc.Key), fc.Key)
	if err != nil {
		c.Log.Warn("the mirror of the origin's audit log cannot be kept; /audit answers that the origin keeps the log", "cache", fc.Cache, "err", err)
		return nil
	}
	if note != "" {
		c.Log.Warn(note)
	}
	return m
}

// followPublisher swaps a follower's new copy into h, with a matcher
// built for it.
func followPublisher(h *tools.Handlers, c *Config) func(*peer.Copy) {
	return func(cp *peer.Copy) {
		h.Serve(cp.Registry, cp.Signature, c.NewMatcher(cp.Registry), cp.FetchedAt)
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
		stamp := func(t time.Time) *time.Time {
			if t.IsZero() {
				return nil
			}
			s := t.Truncate(time.Second)
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

// PeerCacheDir is where accepted peer copies are kept: flag
// (--peer-cache), else beside the registry file, else in a replica's
// followCache, else in the user cache directory; "" (memory only) when
// there is none.
func PeerCacheDir(flag, registryPath, followCache string) string {
	switch {
	case flag != "":
		return flag
	case registryPath != "":
		return registryPath + ".peers"
	case followCache != "":
		// A replica keeps what it caches in one place, --follow-cache.
		return filepath.Join(followCache, "peers")
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "3gs", "peers")
	}
	return ""
}
