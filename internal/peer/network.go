package peer

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/bounded"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// Config says how a Network fetches, keeps and refreshes its peers.
type Config struct {
	Fetcher *Fetcher
	// CacheDir keeps accepted copies; "" keeps them in memory only.
	CacheDir string
	// Refresh is the time between two fetches of a peer that answers;
	// each is moved by up to a tenth either way so that peers endorsed
	// by many nodes are not all asked at once.
	Refresh time.Duration
	// StaleAfter is the age past which an accepted copy is marked stale.
	StaleAfter time.Duration
	// Parallel bounds the peers fetched at once.
	Parallel int
	// Build makes a copy's matcher, once per accepted version.
	Build func(*registry.Registry) matcher.Matcher
	Log   *slog.Logger
	Now   func() time.Time
	// AllowExpired accepts and serves copies whose signature has expired
	// or never expires (3gs serve --allow-expired). Without it such a
	// copy is refused when fetched or read from the cache, and one held
	// stops being served the moment its signature expires.
	AllowExpired bool
	// Fix, when set, says what this node's operator can do about a copy
	// not taken (a Refusal, a TimeoutError), in the caller's words (its
	// flags), or "": it ends the reason logged.
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

// Network keeps the endorsed peers' registries. Queries read Peers, a
// snapshot of immutable values, while refreshes replace a peer's copy
// whole.
type Network struct {
	cfg  Config
	wake bounded.Wake

	mu      sync.Mutex
	own     string // our curator key, never fetched as a peer
	ownName string // our curator's name, which no peer's may read as
	peers   map[string]*state
	order   []string // pubkeys in endorsement order
}

type state struct {
	Peer
	key      ed25519.PublicKey
	failures int
	next     time.Time // when to fetch next; zero: at once
	running  bool
	savedAt  time.Time // the fetch time last written to the cache
}

// New returns a Network with no peers; SetEndorsements gives it some and
// Run keeps them fresh.
func New(cfg Config) *Network {
	if cfg.Parallel <= 0 {
		cfg.Parallel = 4
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Build == nil {
		cfg.Build = func(r *registry.Registry) matcher.Matcher { return matcher.New(r) }
	}
	return &Network{cfg: cfg, wake: bounded.NewWake(), peers: map[string]*state{}}
}

// Config returns the network's configuration.
func (n *Network) Config() Config { return n.cfg }

// SetEndorsements makes the endorsements of our own registry, whose
// curator key is own, the peers. A peer new to the network starts from
// its cached copy, checked again, when there is one; one no longer
// endorsed is dropped (its cache file stays, to be checked again if it
// is endorsed again). A peer's key is its identity: a changed URL or name
// keeps its copy.
//
// Reading and checking cached copies, and indexing them, is done without
// the lock, so queries (Peers) never wait for it; a peer being loaded is
// marked running, so no fetch of it starts before its cached copy, the
// last one accepted, is in place to be compared with.
func (n *Network) SetEndorsements(own string, list []gen.Endorsement) {
	for _, l := range n.setList(own, list) {
		n.loadCached(l.st, l.pubkey, l.st.key)
	}
	n.wake.Nudge()
}

// SetOwnName makes name our curator's name: a peer copy whose curator
// name reads as it (registry.Confusable) is refused when fetched or read
// from the cache, so that no endorsed peer passes its words off as ours
// to a reader who goes by names. Call it before SetEndorsements.
func (n *Network) SetOwnName(name string) {
	n.mu.Lock()
	n.ownName = name
	n.mu.Unlock()
}

// NameLikeOurs is the reason, public, a peer whose curator name reads as
// ours is refused with; the names go to the log.
const NameLikeOurs = "refused: its curator name reads as ours"

// impersonates reports, and logs, a copy whose curator name reads as
// ours.
func (n *Network) impersonates(pubkey, ours string, c *Copy) bool {
	theirs := c.Registry.Curator().Name
	if ours == "" || !registry.Confusable(ours, theirs) {
		return false
	}
	n.cfg.Log.Warn("peer refused: its curator name reads as ours", "peer", pubkey, "their_name", strconv.QuoteToASCII(theirs), "our_name", strconv.QuoteToASCII(ours), "skeleton", registry.Skeleton(theirs))
	return true
}

// toLoad is a new peer whose cached copy is to be read; its key was read
// under the lock (st.key never changes once set).
type toLoad struct {
	st     *state
	pubkey string
}

// setList installs the list under the lock and returns the new peers
// whose cached copies are to be read.
func (n *Network) setList(own string, list []gen.Endorsement) []toLoad {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.own = own
	keep := map[string]bool{}
	n.order = n.order[:0]
	var load []toLoad
	for _, e := range list {
		if keep[e.Pubkey] {
			continue
		}
		keep[e.Pubkey] = true
		n.order = append(n.order, e.Pubkey)
		// A peer already fetched keeps its state. One refused when it was
		// set (a malformed key, or our own) is set up again, as is one
		// that is now our own key: whether a key is ours depends on own,
		// which a reloaded registry can change.
		if st, ok := n.peers[e.Pubkey]; ok && st.key != nil && e.Pubkey != own {
			st.Endorsement = e
			continue
		}
		st := &state{Peer: Peer{Endorsement: e, Status: Pending}}
		n.peers[e.Pubkey] = st
		key, err := curatorkey.ParsePublicKey(e.Pubkey)
		switch {
		case err != nil:
			st.Status, st.Reason, st.Public = Refused, "endorsed pubkey: "+err.Error(), RefusedInvalidEndorsement
			continue
		case e.Pubkey == own:
			st.Status, st.Reason, st.Public = Refused, "this is our own curator key; a registry does not endorse itself", RefusedInvalidEndorsement
			continue
		}
		st.key = key
		if n.cfg.CacheDir != "" {
			st.running = true
			load = append(load, toLoad{st, e.Pubkey})
		}
	}
	for k := range n.peers {
		if !keep[k] {
			delete(n.peers, k)
		}
	}
	return load
}

// loadCached reads st's cached copy, without the lock, and installs it
// unless the peer was dropped meanwhile.
func (n *Network) loadCached(st *state, pubkey string, key ed25519.PublicKey) {
	c, err := loadCopy(n.cfg.CacheDir, pubkey, key, n.cfg.Fetcher.MaxBytes, n.cfg.Now())
	n.mu.Lock()
	ours := n.ownName
	n.mu.Unlock()
	like := err == nil && c != nil && n.impersonates(pubkey, ours, c)
	var m matcher.Matcher
	if err == nil && c != nil && !like {
		m = n.cfg.Build(c.Registry)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	st.running = false
	if n.peers[pubkey] != st {
		return // no longer endorsed, or set up again
	}
	switch {
	case like:
		st.Status, st.Reason, st.Public = Refused, "cached copy "+NameLikeOurs, NameLikeOurs
	case err != nil:
		n.cfg.Log.Warn("peer cache refused", "peer", pubkey, "err", n.cfg.reason(err))
		st.Reason, st.Public = "cached copy refused: "+n.cfg.reason(err), PublicReason(err)
	case c != nil:
		// A fetch time in the future (a clock set back, or a hand-edited
		// file) would keep the copy from ever being reported stale.
		now := n.cfg.Now()
		if c.FetchedAt.After(now) {
			c.FetchedAt = now
		}
		st.Copy, st.Matcher, st.Status, st.savedAt = c, m, Fresh, c.FetchedAt
		// Kept as the copy the next must not go back from, but refused:
		// Peers withholds it (see loadCopy).
		if why := n.withheld(c, now); why != "" {
			n.cfg.Log.Warn("peer cache refused", "peer", pubkey, "err", why)
			st.Status, st.Reason, st.Public = Refused, "cached copy refused: "+why, RefusedExpired
		}
	}
}

// withheld says why c is not to be served at now, or "" when it is.
func (n *Network) withheld(c *Copy, now time.Time) string {
	if n.cfg.AllowExpired {
		return ""
	}
	return expiryProblem(c.Expires, now)
}

// Peers returns every endorsed peer in endorsement order, with its status
// as of now.
func (n *Network) Peers() []Peer {
	now := n.cfg.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Peer, 0, len(n.order))
	for _, k := range n.order {
		p := n.peers[k].Peer
		if p.Status == Fresh && p.Stale(now, n.cfg.StaleAfter) {
			p.Status = Stale
		}
		// A copy expires while held when its peer stops answering, or
		// keeps answering that nothing changed: serving it on would be
		// exactly the freeze expiry exists to end.
		if p.Copy != nil {
			if why := n.withheld(p.Copy, now); why != "" {
				switch {
				case p.Status == Fresh || p.Status == Stale || p.Status == Pending:
					p.Status, p.Reason, p.Public = Refused, "the copy held is no longer served: "+why, RefusedExpired
				case !strings.Contains(p.Reason, why):
					p.Reason += "; the copy held is no longer served either: " + why
				}
				p.Copy, p.Matcher = nil, nil
			}
		}
		// Health held past its signature's expiry is withheld the same
		// way, and with the copy it describes.
		if p.Health != nil && (p.Copy == nil || signature.Expired(p.Health.Expires, now)) {
			p.Health = nil
		}
		out = append(out, p)
	}
	return out
}

// Run fetches every peer at once, then each again when it is due, until
// ctx ends. It never blocks the caller's start-up: run it in its own
// goroutine.
func (n *Network) Run(ctx context.Context) {
	bounded.Rounds(ctx, n.wake, func() time.Duration {
		n.Refresh(ctx, false)
		return n.untilNext()
	})
}

// untilNext is the time until the next peer is due, within the bounds of
// bounded.MinRoundWait and MaxRoundWait (so a changed clock or
// endorsement list is noticed).
func (n *Network) untilNext() time.Duration {
	now := n.cfg.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	wait := bounded.MaxRoundWait
	for _, st := range n.peers {
		if st.key != nil && !st.running {
			wait = min(wait, st.next.Sub(now))
		}
	}
	return max(wait, bounded.MinRoundWait)
}

// Refresh fetches the peers that are due, or all of them with all set,
// at most Parallel at once, and returns when they are done.
func (n *Network) Refresh(ctx context.Context, all bool) {
	now := n.cfg.Now()
	n.mu.Lock()
	var due []*state
	for _, k := range n.order {
		st := n.peers[k]
		if st.key != nil && !st.running && (all || !now.Before(st.next)) {
			st.running = true
			due = append(due, st)
		}
	}
	n.mu.Unlock()
	bounded.Each(due, n.cfg.Parallel, func(st *state) { n.fetch(ctx, st) })
}

// fetch fetches one peer and records the outcome. Only a copy that
// passed every check is saved and swapped in; whatever happens, the last
// accepted copy keeps serving.
func (n *Network) fetch(ctx context.Context, st *state) {
	// SetEndorsements may replace st.Endorsement while the fetch runs, so
	// everything the fetch needs from st is read here, under the lock.
	n.mu.Lock()
	pubkey, url, key, last, saved, ours, lastHealth := st.Endorsement.Pubkey, st.Endorsement.URL, st.key, st.Copy, st.savedAt, n.ownName, st.Health
	n.mu.Unlock()
	c, err := n.cfg.Fetcher.FetchWith(ctx, key, url, AcceptOptions{Now: n.cfg.Now(), AllowExpired: n.cfg.AllowExpired, Last: last})
	if err == nil && n.impersonates(pubkey, ours, c) {
		c, err = nil, &Refusal{Reason: NameLikeOurs, Public: NameLikeOurs} // the names go to the log (impersonates)
	}
	var m matcher.Matcher
	if err == nil {
		if last != nil && c.Registry.SHA256() == last.Registry.SHA256() {
			// The bytes already served (a 304, or a 200 from a peer that
			// sends no ETag): keep their registry, so the matcher built
			// for it stays; each version's index is built once.
			c.Registry = last.Registry
		} else {
			m = n.cfg.Build(c.Registry)
		}
		// An unchanged copy is written again only now and then, to keep
		// its fetch time roughly current for a restart: rewriting a large
		// registry on every 304 would cost far more than it tells.
		changed := last == nil || c.Registry != last.Registry || !bytes.Equal(c.Signature, last.Signature) || c.ETag != last.ETag
		if n.cfg.CacheDir != "" && (changed || c.FetchedAt.Sub(saved) >= n.cfg.StaleAfter/4) {
			if werr := saveCopy(n.cfg.CacheDir, pubkey, c); werr != nil {
				n.cfg.Log.Warn("peer cache not written; the copy serves from memory", "peer", pubkey, "err", werr)
			} else {
				saved = c.FetchedAt
			}
		}
	}
	var health *Health
	if err == nil {
		health = n.fetchHealth(ctx, pubkey, key, url, c, lastHealth)
	}
	now := n.cfg.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	st.running = false
	st.LastAttempt = now
	if saved.After(st.savedAt) {
		st.savedAt = saved
	}
	if err != nil {
		st.failures++
		st.Status, st.Reason, st.Public = Unreachable, n.cfg.reason(err), PublicReason(err)
		if IsRefusal(err) {
			st.Status = Refused
		}
		st.next = now.Add(n.backoff(st.failures))
		n.cfg.Log.Warn("peer not updated", "peer", pubkey, "status", st.Status, "reason", st.Reason, "retry_in", st.next.Sub(now).Round(time.Second))
		return
	}
	if st.Copy == nil || c.Registry != st.Copy.Registry {
		n.cfg.Log.Info("peer registry accepted", "peer", pubkey, "version", c.Registry.Version(), "categories", len(c.Registry.Categories()))
	}
	if m != nil {
		st.Matcher = m
	}
	st.Copy, st.Status, st.Reason, st.Public, st.failures = c, Fresh, "", "", 0
	st.Health = health
	st.next = now.Add(bounded.Jitter(n.cfg.Refresh))
}

// fetchHealth reads the health file of the peer whose registry c was
// just accepted. A file that cannot be read or is refused leaves the one
// accepted before while it is unexpired (a peer that stops answering for
// its health file has not had its sources checked since); a peer that
// publishes none has none.
func (n *Network) fetchHealth(ctx context.Context, pubkey string, key ed25519.PublicKey, url string, c *Copy, last *Health) *Health {
	now := n.cfg.Now()
	h, err := n.cfg.Fetcher.FetchHealth(ctx, key, url, c, last, now)
	switch {
	case err == nil:
		return h
	case errors.Is(err, ErrNoHealth):
		return nil
	}
	n.cfg.Log.Warn("peer source health not updated", "peer", pubkey, "reason", err.Error())
	if last != nil && !signature.Expired(last.Expires, now) {
		return last
	}
	return nil
}

// backoff is the wait before fetching a peer again after its k-th
// failure in a row: a quarter of the refresh interval, doubling, at most
// four intervals, jittered.
func (n *Network) backoff(k int) time.Duration {
	return bounded.Backoff{First: n.cfg.Refresh / 4, Max: 4 * n.cfg.Refresh}.Retry(k)
}
