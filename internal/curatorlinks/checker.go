package curatorlinks

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/internal/bounded"
	"github.com/three-good-sources/3gs/internal/fetch"
)

// Status is what is known of one link.
type Status string

const (
	// Pending: not checked yet (or no check has ended).
	Pending Status = "pending"
	// Verified: the last check found the key.
	Verified Status = "verified"
	// Failed: the last check did not (Result.Reason says why).
	Failed Status = "failed"
)

// Result is what the last check of a link found.
type Result struct {
	Status Status
	// Reason is a failure's public reason (one of Reasons).
	Reason string
	// CheckedAt is when the last check ended; zero while pending.
	CheckedAt time.Time
	// VerifiedAt is when the link last verified; zero if it never did.
	VerifiedAt time.Time
}

// Subject is a curator whose links are to be checked.
type Subject struct {
	// Pubkey is the curator's key, pk: and 52 z-base-32 characters.
	Pubkey string
	Links  []string
	// Home is "" for our own curator; for an endorsed one, the URL our
	// registry endorses them at, the one non-public address their links
	// may name when Operator is set (see the function Operator).
	Home string
	// Operator: the registry that names these links and Home is the
	// operator's, the one this node is the origin of. On a read replica
	// it is the followed origin's, and nothing in it is the operator's.
	Operator bool
}

// Config says what a Checker checks, how often and where it keeps what
// it found.
type Config struct {
	Verifier *Verifier
	// Refresh is the time between two checks of a link that verified,
	// moved by up to a tenth either way; a failing one is checked again
	// sooner (Backoff).
	Refresh time.Duration
	// CachePath is the cache file; "" keeps results in memory only.
	CachePath string
	// Subjects lists the curators whose links are checked now: called at
	// every round, so a reloaded registry or a peer's new copy is seen.
	Subjects func() []Subject
	// Parallel bounds the checks run at once; 0 means 2.
	Parallel int
	Log      *slog.Logger
	Now      func() time.Time
}

// Checker checks links in the background and answers what it found.
type Checker struct {
	cfg  Config
	wake bounded.Wake

	mu    sync.Mutex
	links map[linkKey]*entry
	// dropped: a link was forgotten since the cache was last written.
	dropped bool
}

type linkKey struct{ pubkey, url string }

type entry struct {
	Result
	operator bool // Operator(subject, link): fetched as the operator's
	failures int
	next     time.Time // when to check next; zero: at once
	running  bool
}

// New returns a Checker; Run starts its checks.
func New(cfg Config) *Checker {
	if cfg.Parallel <= 0 {
		cfg.Parallel = 2
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Checker{cfg: cfg, wake: bounded.NewWake(), links: map[linkKey]*entry{}}
}

// Result is what the last check of link, as pubkey's, found: Pending
// when none has ended. A nil Checker knows nothing.
func (c *Checker) Result(pubkey, link string) Result {
	if c == nil {
		return Result{Status: Pending}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.links[linkKey{pubkey, link}]; ok {
		return e.Result
	}
	return Result{Status: Pending}
}

// Wake makes Run look at the subjects now rather than at its next poll.
func (c *Checker) Wake() { c.wake.Nudge() }

// Backoff is the wait before checking a link again after its k-th failure
// in a row (k >= 1), before jitter: a sixteenth of refresh, doubling with
// each failure, never more than refresh. A page published after the
// registry named it is found within the hour (at the 24h default); one
// that stays down is asked about once a refresh interval.
func Backoff(refresh time.Duration, k int) time.Duration { return retries(refresh).Wait(k) }

func retries(refresh time.Duration) bounded.Backoff {
	return bounded.Backoff{First: refresh / 16, Max: refresh}
}

// Run reads the cache, then checks every link that is due, and again
// when each falls due, until ctx ends. Run it in its own goroutine: it
// never holds up the caller.
func (c *Checker) Run(ctx context.Context) {
	c.loadCache()
	poll := min(bounded.MaxRoundWait, max(c.cfg.Refresh/8, time.Second))
	bounded.Rounds(ctx, c.wake, func() time.Duration {
		c.Round(ctx)
		return min(poll, c.untilNext())
	})
}

// untilNext is the time until the next link is due, at least
// bounded.MinRoundWait.
func (c *Checker) untilNext() time.Duration {
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	wait := time.Hour
	for _, e := range c.links {
		if !e.running {
			wait = min(wait, e.next.Sub(now))
		}
	}
	return max(wait, bounded.MinRoundWait)
}

// Round checks the links of the subjects that are due, at most Parallel
// at once, and returns when they are done; links no subject claims any
// more are forgotten. The cache is written when anything changed.
func (c *Checker) Round(ctx context.Context) {
	due := c.due()
	bounded.Each(due, c.cfg.Parallel, func(k linkKey) { c.check(ctx, k) })
	if ctx.Err() == nil && (len(due) > 0 || c.forgot()) {
		c.saveCache()
	}
}

// due installs the subjects' links and marks those due as running.
func (c *Checker) due() []linkKey {
	var subjects []Subject
	if c.cfg.Subjects != nil {
		subjects = c.cfg.Subjects()
	}
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	want := map[linkKey]bool{}
	var due []linkKey
	for _, s := range subjects {
		for _, l := range s.Links {
			k := linkKey{s.Pubkey, l}
			if want[k] {
				continue
			}
			want[k] = true
			e, ok := c.links[k]
			if !ok {
				e = &entry{Result: Result{Status: Pending}}
				c.links[k] = e
			}
			e.operator = Operator(s, l)
			// A link refused now but not when last checked (a cache from
			// before this node became a replica, or from an older 3gs) is
			// due at once, so no result of a fetch it would not make now
			// stays published.
			if (e.Status != Failed || e.Reason != fetch.RefusedAddress) && Refused(s, l) {
				e.next = time.Time{}
			}
			if !e.running && !now.Before(e.next) {
				e.running = true
				due = append(due, k)
			}
		}
	}
	for k, e := range c.links {
		if !want[k] && !e.running {
			delete(c.links, k)
			c.dropped = true
		}
	}
	return due
}

// forgot reports, and clears, that due dropped a link since the last
// write.
func (c *Checker) forgot() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.dropped
	c.dropped = false
	return d
}

// check checks one link and records the outcome.
func (c *Checker) check(ctx context.Context, k linkKey) {
	c.mu.Lock()
	var operator bool
	if e, ok := c.links[k]; ok {
		operator = e.operator
	}
	c.mu.Unlock()
	err := c.cfg.Verifier.Verify(ctx, k.pubkey, k.url, operator)
	if ctx.Err() != nil {
		c.mu.Lock()
		if e, ok := c.links[k]; ok {
			e.running = false
		}
		c.mu.Unlock()
		return
	}
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.links[k]
	if !ok {
		return
	}
	e.running = false
	e.CheckedAt = now
	if err == nil {
		if e.Status != Verified {
			c.cfg.Log.Info("identity link verified", "curator", k.pubkey, "link", k.url)
		}
		e.Status, e.Reason, e.VerifiedAt, e.failures = Verified, "", now, 0
		e.next = now.Add(bounded.Jitter(c.cfg.Refresh))
		return
	}
	e.failures++
	e.Status, e.Reason = Failed, PublicReason(err)
	e.next = now.Add(retries(c.cfg.Refresh).Retry(e.failures))
	c.cfg.Log.Warn("identity link not verified", "curator", k.pubkey, "link", k.url, "reason", e.Reason, "detail", err.Error(), "retry_in", e.next.Sub(now).Round(time.Second))
}
