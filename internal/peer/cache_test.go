package peer

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
)

// withCache keeps accepted copies in dir.
func withCache(dir string) func(*Config) { return func(c *Config) { c.CacheDir = dir } }

// A restarted server serves a down peer from the cache at once: fresh
// while the copy is young, stale later, and kept when the peer stays down.
func TestCacheServesAfterRestart(t *testing.T) {
	h, dir := cachedHarness(t, `"v1"`)
	good := h.accept("1.0.0")
	if _, err := os.Stat(cachePath(dir, h.peer.uri)); err != nil {
		t.Fatalf("no cache file: %v", err)
	}
	h.srv.Close()

	h.clock.Add(time.Minute)
	builds := h.builds.Load()
	h.net = h.newNetwork(withCache(dir))
	h.endorse()
	p := h.only()
	wantOutcome(t, p, Fresh)
	checkWhole(t, p)
	if p.Copy == nil {
		t.Fatal("the cached copy is not served")
	}
	if !bytes.Equal(p.Copy.Registry.Bytes(), good.Copy.Registry.Bytes()) || !bytes.Equal(p.Copy.Signature, good.Copy.Signature) {
		t.Errorf("the cached copy is not the accepted one")
	}
	if !p.Copy.FetchedAt.Equal(good.Copy.FetchedAt) || p.Copy.URL != good.Copy.URL || p.Copy.ETag != `"v1"` {
		t.Errorf("cached copy %+v does not keep fetched_at %v, url %q and etag", p.Copy, good.Copy.FetchedAt, good.Copy.URL)
	}
	if got := h.builds.Load() - builds; got != 1 {
		t.Errorf("%d matchers built for the cached copy, want 1", got)
	}

	h.clock.Add(testStaleAfter)
	p = h.only()
	wantOutcome(t, p, Stale)
	cached := p

	h.refresh()
	p = h.only()
	wantOutcome(t, p, Unreachable, "registry "+h.srv.URL+"/registry: ")
	wantKept(t, p, cached)
}

// A cache file with one byte of its registry changed is refused, and the
// peer is fetched as if there were none.
func TestCacheTampered(t *testing.T) {
	h, dir := cachedHarness(t, "")
	h.accept("1.0.0")
	path, data := readCache(t, dir, h)
	entry, err := gen.DecodePeerCache(data)
	if err != nil {
		t.Fatal(err)
	}
	// Raise the version by one: the change an attacker wants most.
	tampered := strings.Replace(entry.Registry, `"version": "1.0.0"`, `"version": "1.0.1"`, 1)
	if tampered == entry.Registry || len(tampered) != len(entry.Registry) {
		t.Fatal("the test registry did not change by one byte")
	}
	entry.Registry = tampered
	if err := os.WriteFile(path, gen.EncodePeerCache(entry), 0o644); err != nil {
		t.Fatal(err)
	}

	builds := h.builds.Load()
	h.net = h.newNetwork(withCache(dir))
	h.endorse()
	p := h.only()
	wantOutcome(t, p, Pending)
	if p.Copy != nil || p.Matcher != nil {
		t.Fatalf("a tampered cache file is served: version %s", p.Copy.Registry.Version())
	}
	if h.builds.Load() != builds {
		t.Errorf("a matcher was built for a tampered copy")
	}
	if log := h.log.String(); !strings.Contains(log, "peer cache refused") || !strings.Contains(log, "registry bytes changed since signing") {
		t.Errorf("the refusal is not logged with its reason:\n%s", log)
	}

	// The peer, still up, is fetched again, and its copy replaces the bad
	// file.
	h.refresh()
	wantOutcome(t, h.only(), Fresh)
	if _, err := loadCopy(dir, h.peer.uri, pkarrKey(t, h.peer.uri), testMaxBytes, h.clock.Now()); err != nil {
		t.Errorf("the cache file was not rewritten: %v", err)
	}
}

// One peer's cache file is never another's: renamed, it is refused for
// naming another key; with that key rewritten too, for its signature.
func TestCacheRenamedToAnotherPeer(t *testing.T) {
	for _, rewrite := range []bool{false, true} {
		name, reason := "renamed", "holds the copy of"
		if rewrite {
			name, reason = "renamed and rewritten", "signed by a different key"
		}
		t.Run(name, func(t *testing.T) {
			h, dir := cachedHarness(t, "")
			h.accept("1.0.0")
			other := newCurator(t)
			_, data := readCache(t, dir, h)
			if rewrite {
				entry, err := gen.DecodePeerCache(data)
				if err != nil {
					t.Fatal(err)
				}
				entry.Pubkey = other.uri
				data = gen.EncodePeerCache(entry)
			}
			if err := os.WriteFile(cachePath(dir, other.uri), data, 0o644); err != nil {
				t.Fatal(err)
			}

			h.net = h.newNetwork(withCache(dir))
			h.net.SetEndorsements(h.own.uri, []gen.Endorsement{{Pubkey: other.uri, URL: h.srv.URL, Since: "2026-11-01"}})
			p := h.only()
			wantOutcome(t, p, Pending)
			if p.Copy != nil {
				t.Fatalf("%s's copy is served as %s's", h.peer.uri, other.uri)
			}
			if log := h.log.String(); !strings.Contains(log, "peer cache refused") || !strings.Contains(log, reason) {
				t.Errorf("the refusal is not logged with %q:\n%s", reason, log)
			}
			// Fetching it, the real server's registry is h.peer's, not other's.
			h.refresh()
			wantOutcome(t, h.only(), Refused, "signed by a different key")
		})
	}
}

// An unreadable cache file is logged and the peer fetched.
func TestCacheNotACacheFile(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, withCache(dir))
	if err := os.WriteFile(cachePath(dir, h.peer.uri), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.endorse()
	p := h.only()
	wantOutcome(t, p, Pending)
	if p.Copy != nil {
		t.Fatal("an empty cache file is served")
	}
	if log := h.log.String(); !strings.Contains(log, "peer cache refused") {
		t.Errorf("the refusal is not logged:\n%s", log)
	}
	h.accept("1.0.0")
}

// A copy that passed a 304 is saved with its new fetch time, so a restart
// does not report it staler than it is.
func TestCacheKeepsRefreshedFetchTime(t *testing.T) {
	h, dir := cachedHarness(t, `"v1"`)
	h.accept("1.0.0")
	later := h.clock.Add(testStaleAfter)
	h.refresh()
	wantOutcome(t, h.only(), Fresh)

	h.net = h.newNetwork(withCache(dir))
	h.endorse()
	p := h.only()
	wantOutcome(t, p, Fresh)
	if p.Copy == nil || !p.Copy.FetchedAt.Equal(later) {
		t.Fatalf("cached copy %+v, want fetched at %v", p.Copy, later)
	}
}

// An unchanged copy (a 304) is not rewritten on every refresh, only once a
// quarter of the stale age has passed since it was last written: a large
// registry rewritten every few minutes would cost more than it tells.
func TestCacheNotRewrittenForEvery304(t *testing.T) {
	h, dir := cachedHarness(t, `"v1"`)
	h.accept("1.0.0")
	path, first := readCache(t, dir, h)
	h.clock.Add(testStaleAfter/4 - time.Minute)
	h.refresh()
	wantOutcome(t, h.only(), Fresh)
	if again, _ := os.ReadFile(path); !bytes.Equal(again, first) {
		t.Error("the cache file was rewritten for a 304 soon after it was written")
	}
	later := h.clock.Add(2 * time.Minute)
	h.refresh()
	entry, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(entry, []byte(later.UTC().Format(time.RFC3339))) {
		t.Errorf("after a quarter of the stale age, the cache file should hold the new fetch time %v", later)
	}
}

// cachedHarness is a harness whose network keeps its peers' copies in a
// new directory, which it returns, with the peer endorsed; a non-empty
// etag is what the peer's server sends as its ETag.
func cachedHarness(t *testing.T, etag string) (*harness, string) {
	t.Helper()
	dir := t.TempDir()
	h := newHarness(t, withCache(dir))
	if etag != "" {
		h.srv.setETag(etag)
	}
	h.endorse()
	return h, dir
}

// readCache reads the peer's cache file in dir.
func readCache(t *testing.T, dir string, h *harness) (path string, data []byte) {
	t.Helper()
	path = cachePath(dir, h.peer.uri)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}
