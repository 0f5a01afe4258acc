package curatorlinks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/bounded"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// CacheSuffix names the cache file beside its registry.
const CacheSuffix = ".identity.json"

// CacheMaxSize bounds the cache file: at most 4,096 entries of well under
// a KiB each.
const CacheMaxSize = 4 << 20

// loadCache installs what the cache file holds: each link's last result,
// due again when its refresh or backoff is over. A missing file is no
// error; a bad one is logged and ignored (every link is then pending).
func (c *Checker) loadCache() {
	if c.cfg.CachePath == "" {
		return
	}
	data, err := safefile.ReadNoFollow(c.cfg.CachePath, CacheMaxSize, "identity cache file")
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var doc *gen.IdentityCache
	if err == nil {
		doc, err = gen.DecodeIdentityCache(data)
	}
	if err != nil {
		c.cfg.Log.Warn("identity cache not read; every link is checked again", "file", c.cfg.CachePath, "err", err)
		return
	}
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range doc.Checks {
		// A time in the future (a clock set back, a hand edit) would put
		// the next check off for as long.
		at := earliest(ch.CheckedAt, now)
		e := &entry{Result: Result{Status: Status(ch.Status), CheckedAt: at}, failures: ch.Failures}
		if ch.Reason != nil {
			e.Reason = string(*ch.Reason)
		}
		if ch.VerifiedAt != nil {
			e.VerifiedAt = earliest(*ch.VerifiedAt, now)
		}
		if e.Status == Verified {
			e.next = at.Add(bounded.Jitter(c.cfg.Refresh))
		} else {
			e.next = at.Add(retries(c.cfg.Refresh).Retry(max(e.failures, 1)))
		}
		c.links[linkKey{ch.Pubkey, ch.URL}] = e
	}
}

// saveCache writes every link checked at least once, atomically and
// without following a link; a failure is logged, and the results stay in
// memory.
func (c *Checker) saveCache() {
	if c.cfg.CachePath == "" {
		return
	}
	doc := c.snapshot()
	if err := writeCache(c.cfg.CachePath, doc); err != nil {
		c.cfg.Log.Warn("identity cache not written; the results serve from memory", "file", c.cfg.CachePath, "err", err)
	}
}

// snapshot is the cache document of what is known now, in a stable order.
func (c *Checker) snapshot() *gen.IdentityCache {
	c.mu.Lock()
	defer c.mu.Unlock()
	doc := &gen.IdentityCache{Checks: []gen.IdentityCheck{}}
	for k, e := range c.links {
		if e.Status == Pending || e.CheckedAt.IsZero() {
			continue
		}
		ch := gen.IdentityCheck{Pubkey: k.pubkey, URL: k.url, Status: gen.IdentityCheckStatus(e.Status), CheckedAt: e.CheckedAt.Truncate(time.Second), Failures: min(e.failures, 1000000)}
		if e.Reason != "" {
			r := gen.IdentityReason(e.Reason)
			ch.Reason = &r
		}
		if !e.VerifiedAt.IsZero() {
			v := e.VerifiedAt.Truncate(time.Second)
			ch.VerifiedAt = &v
		}
		doc.Checks = append(doc.Checks, ch)
	}
	slices.SortFunc(doc.Checks, func(a, b gen.IdentityCheck) int {
		if n := strings.Compare(a.Pubkey, b.Pubkey); n != 0 {
			return n
		}
		return strings.Compare(a.URL, b.URL)
	})
	return doc
}

// writeCache replaces the cache file at path with doc.
func writeCache(path string, doc *gen.IdentityCache) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return safefile.WriteNoFollow(path, append(gen.EncodeIdentityCache(doc), '\n'), 0o644)
}

// earliest is the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if a.After(b) {
		return b
	}
	return a
}
