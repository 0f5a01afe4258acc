// Package follow keeps a read replica's registry in step with its origin:
// the curator's node, whose signed registry it serves. It is the peer
// machinery (internal/peer) pointed at one registry that this node serves
// as its own: every copy must verify against the origin's key given on
// the command line, must not have expired, must not go back in version or
// audit log head from the last copy accepted, and only then replaces what
// is served. The last good copy is kept on disk, so a restart while the
// origin is down serves it rather than nothing.
//
// The model is an apt mirror or a TUF client: the replica holds no secret
// and trusts nothing it fetched but the signature, so any number of them
// can run behind a load balancer, and a compromised one can serve only
// what the curator signed.
package follow

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
)

// Status is the state of the follower, for /health.
type Status string

const (
	// Fresh: the last check reached the origin and what it serves is
	// what this node serves.
	Fresh Status = "fresh"
	// Refused: the origin answered with a copy that failed a check; the
	// last good copy is served.
	Refused Status = "refused"
	// Unreachable: the last check did not get an answer.
	Unreachable Status = "unreachable"
)

// Config is what a follower needs.
type Config struct {
	// URL is the origin (peer.Locate's rule): a node URL or a document.
	URL string
	// Key is the origin curator's key; nothing else is accepted.
	Key ed25519.PublicKey
	// Refresh is how often the origin is asked again.
	Refresh time.Duration
	// CacheDir keeps the last good copy; "" keeps none.
	CacheDir string
	// Fetcher reads the origin within its bounds.
	Fetcher *peer.Fetcher
	// Mirror, when set, keeps a verified copy of the origin's audit log
	// up to the head of each copy accepted (mirror.go).
	Mirror *Mirror
	// AllowExpired serves a copy whose signature expired (--allow-expired).
	AllowExpired bool
	// Publish serves a newly accepted copy; it is called from one
	// goroutine at a time, never concurrently with itself.
	Publish func(*peer.Copy)
	// PublishHealth, when set, serves the origin's source health as
	// accepted at each check (nil: the origin publishes none now), so
	// that get_sources answers here as at the origin. The same goroutine
	// calls it as Publish.
	PublishHealth func(*peer.Health, sourcehealth.Published)
	Log           *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Fix, when set, says what this node's operator can do about a copy
	// not taken (a peer.Refusal, a peer.TimeoutError), in the caller's
	// words (its flags), or "": it ends the reason logged and returned.
	Fix func(error) string
}

// reason is err as the log gives it, with the operator's fix.
func (c *Config) reason(err error) string {
	if c.Fix != nil {
		if fix := c.Fix(err); fix != "" {
			return err.Error() + "; " + fix
		}
	}
	return err.Error()
}

// State is what /health reports.
type State struct {
	Origin string
	Status Status
	// Reason says why the last check did not take the origin's copy, in
	// full, for the log; Public is the same as anyone may see it
	// (/health): a coarse reason (peer.PublicReason), never anything the
	// origin sent.
	Reason      string
	Public      string
	Served      *peer.Copy
	LastCheck   time.Time
	LastSuccess time.Time
	// Expired is set when the signature of the copy served (Served.Expires)
	// has expired and expired copies are not allowed: nothing is served
	// from it until a fresh copy comes. Status and Reason still say what
	// the last check found.
	Expired bool
}

// Follower follows one origin.
type Follower struct {
	cfg Config
	mu  sync.Mutex
	st  State
	// last is the last copy accepted, served or not: the baseline the
	// next copy may not go back from.
	last *peer.Copy
	// expiredLogged is the served copy whose expiry was last logged, so
	// that it is logged once, not at every check.
	expiredLogged *peer.Copy
	// health is the origin's source health as last accepted, and pub
	// the file and signature it came in; nil when there is none.
	health *peer.Health
	held   peer.HeldHealth
	// healthWhy is why the origin's health was last not taken, logged
	// when it changes rather than at every check (an origin without a key
	// publishes its file unsigned, for good).
	healthWhy string
}

// New returns a follower; call Start, then Run.
func New(cfg Config) *Follower {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Follower{cfg: cfg, st: State{Origin: cfg.URL}}
}

// ErrNothingToServe is wrapped by Start's error when neither the cache
// nor the origin gave a copy that may be served.
var ErrNothingToServe = errors.New("no verified copy of the origin's registry to serve")

// Start loads the cached copy and asks the origin once, and returns the
// copy to serve first: the origin's when it answered with a good one, else
// the cached one. It fails when there is neither, saying why.
func (f *Follower) Start(ctx context.Context) (*peer.Copy, error) {
	pub := curatorkey.URI(f.cfg.Key)
	if f.cfg.CacheDir != "" {
		c, err := peer.LoadCopy(f.cfg.CacheDir, pub, f.cfg.Key, f.cfg.Fetcher.MaxBytes, f.cfg.Now())
		if err != nil {
			// A cache that does not check out is not served, and not a
			// baseline either; the origin decides.
			f.cfg.Log.Warn("the follower's cached copy is refused; fetching from the origin", "err", f.cfg.reason(err))
		}
		f.last = c
	}
	fetched := f.check(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last != nil && f.last.Served(f.cfg.Now(), f.cfg.AllowExpired) {
		f.st.Served = f.last
		if !fetched {
			f.cfg.Log.Warn("the origin did not give a good copy; serving the cached one", "origin", f.cfg.URL, "version", f.last.Registry.Version(), "why", f.st.Reason)
		}
		return f.last, nil
	}
	why := f.st.Reason
	if f.last != nil {
		why += "; the cached copy has expired"
	}
	return nil, fmt.Errorf("%w from %s: %s", ErrNothingToServe, f.cfg.URL, why)
}

// check asks the origin once and, for a good new copy, saves and
// publishes it. It reports whether the origin answered with a good copy
// (new or unchanged).
func (f *Follower) check(ctx context.Context) bool {
	now := f.cfg.Now()
	c, err := f.cfg.Fetcher.FetchWith(ctx, f.cfg.Key, f.cfg.URL, peer.AcceptOptions{Now: now, AllowExpired: f.cfg.AllowExpired, Last: f.last})
	f.mu.Lock()
	f.st.LastCheck = now
	if err != nil {
		f.st.Status, f.st.Reason, f.st.Public = Unreachable, f.cfg.reason(err), peer.PublicReason(err)
		if peer.IsRefusal(err) {
			f.st.Status = Refused
		}
		status, held := f.st.Status, f.last != nil
		f.mu.Unlock()
		if held {
			f.cfg.Log.Warn("the origin's registry was not taken; serving the last good copy", "origin", f.cfg.URL, "status", status, "why", f.cfg.reason(err))
		} else {
			f.cfg.Log.Warn("the origin's registry was not taken, and there is no copy to serve yet", "origin", f.cfg.URL, "status", status, "why", f.cfg.reason(err))
		}
		return false
	}
	changed := f.last == nil || c.Registry.SHA256() != f.last.Registry.SHA256() || string(c.Signature) != string(f.last.Signature)
	if !changed {
		c.Registry = f.last.Registry // keep the one the matcher was built for
	}
	f.last = c
	f.st.Status, f.st.Reason, f.st.Public, f.st.LastSuccess = Fresh, "", "", now
	served := f.st.Served
	f.mu.Unlock()
	if changed && f.cfg.CacheDir != "" {
		if err := peer.SaveCopy(f.cfg.CacheDir, curatorkey.URI(f.cfg.Key), c); err != nil {
			f.cfg.Log.Warn("the follower's cache was not written; the copy serves from memory", "err", err)
		}
	}
	f.syncMirror(ctx, c)
	f.syncHealth(ctx, c, now)
	if changed && served != nil {
		f.publish(c)
	}
	return true
}

// syncMirror brings the mirror of the origin's log to the head c's
// signature covers, before c is served, so that the log a replica serves
// reaches the registry it serves whenever the origin's log could be read.
// A mirror that falls behind is not a reason to refuse c: the replica
// then answers /audit as the origin keeping the log, until it catches up.
func (f *Follower) syncMirror(ctx context.Context, c *peer.Copy) {
	m := f.cfg.Mirror
	if m == nil || c.Log == nil {
		return
	}
	restarted, err := m.Sync(*c.Log, c.Registry.SHA256(), func(after, until int) (io.ReadCloser, error) {
		return f.cfg.Fetcher.ReadLogFrom(ctx, f.cfg.URL, after, until)
	})
	switch {
	case err != nil:
		f.cfg.Log.Warn("the origin's audit log was not mirrored; /audit answers that the origin keeps it until it is", "origin", f.cfg.URL, "head", c.Log.Seq, "why", err.Error())
	case restarted:
		f.cfg.Log.Warn("the mirror of the origin's audit log did not lead to the origin's head, and was built again from the origin's log", "origin", f.cfg.URL, "head", c.Log.Seq)
	}
}

// syncHealth reads the source health file the origin publishes beside
// its registry (/registry.health.json and its .sig) through the same
// bounded fetcher, and takes it only as peer.AcceptHealth does an
// endorsed curator's: signed for a health file by the origin's key,
// unexpired, not older than the last one taken, and only of the sources
// c lists. A file that cannot be read or is refused leaves the last one
// while its signature is in force; an origin that publishes none has
// none here either.
func (f *Follower) syncHealth(ctx context.Context, c *peer.Copy, now time.Time) {
	f.mu.Lock()
	last, held := f.health, f.held
	f.mu.Unlock()
	h, held, err := f.cfg.Fetcher.FetchPublishedHealth(ctx, f.cfg.Key, f.cfg.URL, c, last, held, now)
	why := ""
	if err != nil && !errors.Is(err, peer.ErrNoHealth) {
		why = f.cfg.reason(err)
	}
	if why != f.healthWhy && why != "" {
		f.cfg.Log.Warn("the origin's source health was not taken; get_sources here shows the last one taken while its signature is in force, else none", "origin", f.cfg.URL, "why", why)
	}
	f.healthWhy = why
	if why != "" && last != nil && !signature.Expired(last.Expires, now) {
		return
	}
	if h == nil && last == nil {
		return
	}
	f.mu.Lock()
	f.health, f.held = h, held
	publish := f.cfg.PublishHealth
	f.mu.Unlock()
	if publish != nil {
		publish(h, held.Published)
	}
}

// Health is the origin's source health as last accepted and the file it
// came in; nil when there is none.
func (f *Follower) Health() (*peer.Health, sourcehealth.Published) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.health, f.held.Published
}

// SetPublishHealth sets Config.PublishHealth; call it before Run.
func (f *Follower) SetPublishHealth(fn func(*peer.Health, sourcehealth.Published)) {
	f.mu.Lock()
	f.cfg.PublishHealth = fn
	f.mu.Unlock()
}

// Mirror is the follower's mirror of the origin's audit log; nil when it
// keeps none.
func (f *Follower) Mirror() *Mirror { return f.cfg.Mirror }

// publish serves c.
func (f *Follower) publish(c *peer.Copy) {
	f.cfg.Publish(c)
	f.mu.Lock()
	f.st.Served = c
	f.mu.Unlock()
	f.cfg.Log.Info("serving the origin's new registry", "origin", f.cfg.URL, "version", c.Registry.Version(), "sha256", c.Registry.SHA256())
}

// Run asks the origin every Refresh, moved by up to a tenth either way so
// that replicas started together do not ask together, until ctx ends. A
// served copy that expires meanwhile is reported (the origin's renewed
// signature normally replaces it first).
func (f *Follower) Run(ctx context.Context) {
	for {
		d := f.cfg.Refresh
		if tenth := int64(d / 10); tenth > 0 {
			d += time.Duration(rand.Int64N(2*tenth+1) - tenth)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		f.check(ctx)
		f.logExpiry()
	}
}

// logExpiry warns, once per copy, that the copy served has expired.
func (f *Follower) logExpiry() {
	st := f.State()
	if !st.Expired || st.Served == f.expiredLogged {
		return
	}
	f.expiredLogged = st.Served
	f.cfg.Log.Warn("the copy of the origin's registry held here has expired; the tools refuse to answer from it until the origin gives a copy with a signature in force", "origin", f.cfg.URL, "version", st.Served.Registry.Version(), "expired", st.Served.Expires.UTC().Format(time.RFC3339), "last_check", st.Status, "why", st.Reason)
}

// SetPublish sets Config.Publish, for a caller that builds what serves the
// copies (the tool handlers) from the first copy Start returned. Call it
// before Run.
func (f *Follower) SetPublish(fn func(*peer.Copy)) { f.cfg.Publish = fn }

// State returns what /health reports, as of now: once the signature of
// the copy served has expired (and expired copies are not allowed), it is
// Expired, whether or not a check has run since.
func (f *Follower) State() State {
	f.mu.Lock()
	st := f.st
	f.mu.Unlock()
	st.Expired = st.Served != nil && !f.cfg.AllowExpired && signature.Expired(st.Served.Expires, f.cfg.Now())
	return st
}
