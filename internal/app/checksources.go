package app

import (
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/linkcheck"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
	"github.com/three-good-sources/3gs/internal/tools"
)

// politeInterval is the shortest --check-sources that is not warned about:
// checking every source of a registry more often is unkind to their hosts.
const politeInterval = time.Hour

// sourceChecker keeps the served registry's source health: read from the
// health file at start (and again when it changes, if another process
// writes it), and, with an interval, checked in the background and
// written there, by this server alone.
type sourceChecker struct {
	h        *tools.Handlers
	version  string        // 3gs's, for the user agent
	path     string        // the health file; "" keeps it in memory
	interval time.Duration // 0: no checks
	// operator: the sources checked are the operator's, in the registry
	// this node is the origin of; on a read replica they are the followed
	// origin's, and one naming a non-public host is not fetched.
	operator bool
	log      *slog.Logger
	opts     linkcheck.Options
	// key, the curator's when this server holds it, signs the health
	// file it publishes (/registry.health.json), so that the servers of
	// curators who endorse ours can show it as our curator's word.
	key ed25519.PrivateKey

	mu   sync.Mutex
	doc  *gen.Sourcehealth
	seen fileStamp // of the health file, as last read
	pub  sourcehealth.Published
	// signedAt is when pub was signed; zero when it is not.
	signedAt time.Time
	// origin is a read replica's origin's source health (followed),
	// what it says when the replica neither checks nor reads a file.
	origin *peer.Health
}

type fileStamp struct {
	mod  time.Time
	size int64
}

func stamp(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{fi.ModTime(), fi.Size()}
}

// watchHealthEvery is how often a server that does not check the sources
// itself looks whether 3gs check rewrote the health file.
const watchHealthEvery = time.Minute

func newSourceChecker(h *tools.Handlers, version, path string, interval time.Duration, key ed25519.PrivateKey, operator bool, log *slog.Logger) *sourceChecker {
	c := &sourceChecker{h: h, version: version, path: path, interval: interval, key: key, operator: operator, log: log}
	c.opts = linkcheck.Options{
		PerHost: linkcheck.DefaultPerHost, Delay: linkcheck.DefaultDelay, Concurrency: linkcheck.DefaultConcurrency,
		Timeout: linkcheck.DefaultTimeout, MaxRetryAfter: linkcheck.DefaultMaxRetryAfter,
		Resolver: net.DefaultResolver,
		Log:      func(msg string) { log.Debug("source check", "detail", msg) },
	}
	c.reload()
	return c
}

// reload reads the health file when it changed since last read.
func (c *sourceChecker) reload() {
	if c.path == "" {
		return
	}
	st := stamp(c.path)
	c.mu.Lock()
	same := st == c.seen
	c.mu.Unlock()
	if same {
		return
	}
	doc, p, err := sourcehealth.ReadPublished(c.path)
	if err != nil {
		c.log.Warn("source health file not read", "file", c.path, "err", err)
		return
	}
	c.set(doc, p, st)
}

// set makes doc what get_sources and /health say of the sources, and p
// (the file's bytes and signature as read or written) what is published,
// signed again with the curator's key when this server holds it.
func (c *sourceChecker) set(doc *gen.Sourcehealth, p sourcehealth.Published, st fileStamp) {
	c.mu.Lock()
	c.doc, c.seen, c.pub, c.signedAt = doc, st, p, time.Time{}
	if doc != nil && c.key != nil {
		c.sign(time.Now())
	}
	c.mu.Unlock()
	c.h.SetSourceHealth(sourcehealth.NewIndex(doc))
}

// followed makes the source health a read replica's origin publishes
// (follow.Follower.Health, as accepted: signed by the origin's curator,
// of the sources its registry lists) what get_sources and /health say
// of the sources, and publishes its file and signature as they came, so
// that the replica answers as the origin does. nil: the origin publishes
// none.
func (c *sourceChecker) followed(h *peer.Health, p sourcehealth.Published) {
	c.mu.Lock()
	c.origin, c.pub = h, p
	c.mu.Unlock()
	var ix *sourcehealth.Index
	if h != nil {
		ix = h.Index
	}
	c.h.SetSourceHealth(ix)
}

// sign signs c.doc as published, at now; c.mu is held.
func (c *sourceChecker) sign(now time.Time) {
	c.pub, c.signedAt = sourcehealth.Sign(c.doc, c.key, now, sourcehealth.Validity(c.interval)), now
}

// published is the health file /registry.health.json serves: signed by
// this server when it holds the key, signed again once half of the
// signature's validity has passed (a server that does not check the
// sources itself keeps publishing the file 3gs check wrote).
func (c *sourceChecker) published() sourcehealth.Published {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); c.doc != nil && c.key != nil && now.Sub(c.signedAt) > sourcehealth.Validity(c.interval)/2 {
		c.sign(now)
	}
	return c.pub
}

// health is /health's sources: the last check's counts, nil when none.
func (c *sourceChecker) health() *gen.HealthSources {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s gen.SourcehealthSummary
	var at time.Time
	switch {
	case c.doc != nil:
		s, at = c.doc.Summary, c.doc.CheckedAt
	case c.origin != nil:
		s, at = c.origin.Summary, c.origin.CheckedAt
	default:
		return nil
	}
	return &gen.HealthSources{Ok: s.Ok, Redirected: s.Redirected, Changed: s.Changed, Gone: s.Gone, Error: s.Error, CheckedAt: at}
}

// run checks the sources every interval, or, without one, watches the
// health file, until ctx ends.
func (c *sourceChecker) run(ctx context.Context) {
	if c.interval == 0 {
		for linkcheck.Sleep(ctx, watchHealthEvery) == nil {
			c.reload()
		}
		return
	}
	if c.interval < politeInterval {
		c.log.Warn("checking every source more often than hourly; their hosts may take it for abuse", "check_sources", c.interval)
	}
	write := c.path != ""
	if write {
		lock, err := sourcehealth.Lock(c.path)
		if err != nil {
			write = false
			if errors.Is(err, safefile.ErrHeld) {
				c.log.Warn("another process writes the source health file; the checks here are kept in memory only", "file", c.path, "err", err)
			} else {
				c.log.Warn("the source health file cannot be locked; the checks here are kept in memory only", "file", c.path, "err", err)
			}
		} else {
			defer lock.Unlock()
		}
	}
	// The first check waits a while too, so servers started together do
	// not all check at once.
	wait := jitter(min(c.interval/10, time.Minute), 1)
	for linkcheck.Sleep(ctx, wait) == nil {
		c.checkOnce(ctx, write)
		wait = jitter(c.interval, 0.1)
	}
}

// checkOnce checks every source of the registry served now.
func (c *sourceChecker) checkOnce(ctx context.Context, write bool) {
	reg := c.h.Published().Registry
	c.mu.Lock()
	prev := c.doc
	c.mu.Unlock()
	o := c.opts
	o.Previous = sourcehealth.Previous(prev)
	o.Client = fetch.New(fetch.Options{ConnectTimeout: min(o.Timeout, fetch.DefaultConnectTimeout), HeaderTimeout: o.Timeout, Resolver: o.Resolver, UserAgent: linkcheck.UserAgent(c.version, reg.Curator().Name), Operator: c.operator})
	start := time.Now()
	targets := c.fetchable(sourcehealth.Targets(reg))
	results := linkcheck.Check(ctx, targets, o)
	if ctx.Err() != nil {
		return
	}
	if out, down := linkcheck.NetworkDown(results); down {
		// Such a run says nothing about the sources: the last check's
		// health stays what get_sources and /health say, and no agent is
		// told a source is gone.
		c.log.Warn("the network looks unavailable: the sources' health was left as the last check found it; check DNS and connectivity",
			"hosts", out.Hosts, "unreachable", out.Failed, "took", time.Since(start).Round(time.Millisecond))
		return
	}
	now := time.Now()
	doc := sourcehealth.Doc(reg, results, now)
	p := sourcehealth.Sign(doc, c.key, now, sourcehealth.Validity(c.interval))
	st := fileStamp{}
	if write {
		if err := sourcehealth.WritePublished(c.path, p); err != nil {
			c.log.Warn("source health file not written", "file", c.path, "err", err)
		} else {
			st = stamp(c.path)
		}
	}
	c.set(doc, p, st)
	c.log.Info("checked the sources", "sources", len(targets), "summary", sourcehealth.SummaryLine(doc.Summary), "took", time.Since(start).Round(time.Millisecond))
}

// fetchable is targets but, on a read replica, those whose host
// fetch.CheckHost refuses: the followed origin named them, not this
// node's operator, so they are not fetched, and nothing is published of
// them (no health is known). A status for them, even a refusal, would
// read as news of the source; what the replica's own network answers is
// no one's business.
func (c *sourceChecker) fetchable(targets []linkcheck.Target) []linkcheck.Target {
	if c.operator {
		return targets
	}
	out := targets[:0:0]
	for _, t := range targets {
		u, err := url.Parse(t.URL)
		if err == nil {
			_, err = fetch.CheckHost(u.Hostname())
		}
		if err != nil {
			c.log.Debug("source not checked: the origin's registry names a host this replica does not fetch", "category", t.Category, "rank", t.Rank, "url", t.URL, "err", err)
			continue
		}
		out = append(out, t)
	}
	return out
}

// jitter is d moved by up to frac of it either way (frac 1: anywhere
// from 0 to 2d).
func jitter(d time.Duration, frac float64) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(float64(d) * (1 + frac*(2*rand.Float64()-1)))
}
