package curatorlinks

import (
	"context"
	"github.com/three-good-sources/3gs/internal/fetch"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
)

func TestBackoffDoublesUpToTheRefresh(t *testing.T) {
	refresh := 24 * time.Hour
	want := []time.Duration{90 * time.Minute, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 24 * time.Hour}
	for k, w := range want {
		if got := Backoff(refresh, k+1); got != w {
			t.Errorf("Backoff(24h, %d) = %s, want %s", k+1, got, w)
		}
	}
	if got := Backoff(refresh, 1000); got != refresh {
		t.Errorf("Backoff(24h, 1000) = %s, want the refresh", got)
	}
}

// clock is a settable time for a Checker.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestChecker(t *testing.T, clk *clock, cache string, subjects ...Subject) *Checker {
	t.Helper()
	return New(Config{Verifier: verifier(0), Refresh: 24 * time.Hour, CachePath: cache, Now: clk.now,
		Subjects: func() []Subject { return subjects }})
}

func TestRoundChecksEachLinkAndBacksOff(t *testing.T) {
	base := site(t, map[string]string{"/with": key, "/without": "no key"})
	clk := &clock{time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)}
	c := newTestChecker(t, clk, "", Subject{Pubkey: key, Operator: true, Links: []string{base + "/with", base + "/without"}})
	if r := c.Result(key, base+"/with"); r.Status != Pending {
		t.Fatalf("before any round: %+v, want pending", r)
	}
	c.Round(context.Background())
	if r := c.Result(key, base+"/with"); r.Status != Verified || !r.CheckedAt.Equal(clk.t) || !r.VerifiedAt.Equal(clk.t) {
		t.Errorf("page with the key: %+v", r)
	}
	if r := c.Result(key, base+"/without"); r.Status != Failed || r.Reason != KeyNotFound {
		t.Errorf("page without the key: %+v", r)
	}
	// Within the first backoff (90 minutes, give or take a tenth) nothing
	// is due; past it only the failing link is.
	clk.t = clk.t.Add(80 * time.Minute)
	if due := c.due(); len(due) != 0 {
		t.Errorf("due after 80 minutes: %v", due)
	}
	clk.t = clk.t.Add(20 * time.Minute)
	due := c.due()
	if len(due) != 1 || due[0].url != base+"/without" {
		t.Fatalf("due after 100 minutes: %v, want the failing link alone", due)
	}
	c.check(context.Background(), due[0])
	c.mu.Lock()
	e := c.links[due[0]]
	wait := e.next.Sub(clk.t)
	c.mu.Unlock()
	if e.failures != 2 || wait < 162*time.Minute || wait > 198*time.Minute {
		t.Errorf("after the second failure: %d failures, next in %s, want 2 and 3h give or take a tenth", e.failures, wait)
	}
}

func TestCacheKeepsResultsAcrossARestart(t *testing.T) {
	base := site(t, map[string]string{"/with": key})
	cache := filepath.Join(t.TempDir(), "registry.json"+CacheSuffix)
	clk := &clock{time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)}
	c := newTestChecker(t, clk, cache, Subject{Pubkey: key, Operator: true, Links: []string{base + "/with"}})
	c.Round(context.Background())

	// A new checker for the same links reads what the first found, and
	// does not check again before the refresh is due.
	clk.t = clk.t.Add(time.Hour)
	again := newTestChecker(t, clk, cache, Subject{Pubkey: key, Operator: true, Links: []string{base + "/with", base + "/new"}})
	again.loadCache()
	if r := again.Result(key, base+"/with"); r.Status != Verified || !r.CheckedAt.Equal(clk.t.Add(-time.Hour)) {
		t.Errorf("after a restart: %+v, want verified an hour ago", r)
	}
	if due := again.due(); len(due) != 1 || due[0].url != base+"/new" {
		t.Errorf("due after a restart: %v, want the new link alone", due)
	}
}

// A link no subject claims any more is dropped from memory and from the
// cache at the next write.
func TestRoundForgetsLinksNoLongerClaimed(t *testing.T) {
	base := site(t, map[string]string{"/with": key})
	cache := filepath.Join(t.TempDir(), "identity.json")
	clk := &clock{time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)}
	links := []string{base + "/with"}
	c := New(Config{Verifier: verifier(0), Refresh: 24 * time.Hour, CachePath: cache, Now: clk.now,
		Subjects: func() []Subject { return []Subject{{Pubkey: key, Operator: true, Links: links}} }})
	c.Round(context.Background())
	links = nil
	c.Round(context.Background())
	if r := c.Result(key, base+"/with"); r.Status != Pending {
		t.Errorf("a link no longer claimed: %+v, want pending (unknown)", r)
	}
	data, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := gen.DecodeIdentityCache(data)
	if err != nil || len(doc.Checks) != 0 {
		t.Errorf("cache after the link was dropped: %s (%v)", data, err)
	}
}

// The cache file is written through no symbolic link: one in its place
// is refused, and the file it names is left alone.
func TestCacheWriteDoesNotFollowASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "identity.json")
	if err := os.Symlink(target, cache); err != nil {
		t.Fatal(err)
	}
	if err := writeCache(cache, (&Checker{links: map[linkKey]*entry{}}).snapshot()); err == nil {
		t.Error("writing over a symbolic link succeeded")
	}
	if data, _ := os.ReadFile(target); string(data) != "keep" {
		t.Errorf("the link's target was changed: %q", data)
	}
}

// A node that verified its curator's loopback link as the origin, and
// restarts as a read replica of that registry, does not keep publishing
// the verified result it could not get now: the link is due at once and
// fails, refused, without a fetch.
func TestCachedResultOfARefusedLinkIsNotKept(t *testing.T) {
	base := site(t, map[string]string{"/with": key})
	cache := filepath.Join(t.TempDir(), "registry.json"+CacheSuffix)
	clk := &clock{time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)}
	newTestChecker(t, clk, cache, Subject{Pubkey: key, Operator: true, Links: []string{base + "/with"}}).Round(context.Background())

	clk.t = clk.t.Add(time.Hour)
	replica := newTestChecker(t, clk, cache, Subject{Pubkey: key, Links: []string{base + "/with"}})
	replica.loadCache()
	replica.Round(context.Background())
	if r := replica.Result(key, base+"/with"); r.Status != Failed || r.Reason != fetch.RefusedAddress {
		t.Errorf("the replica's result: %+v, want failed, %s", r, fetch.RefusedAddress)
	}
}
