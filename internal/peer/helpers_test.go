package peer

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// signedAt is the signing time of every test signature: the signature
// document then depends on the bytes and the key alone. It is a few days
// before the harness clock, so the signatures (valid for
// signature.DefaultValidity) are in force there and not yet due for
// renewal (Copy.renewDue).
var signedAt = time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)

// testCurator is a curator with a fresh key.
type testCurator struct {
	key ed25519.PrivateKey
	uri string // pk:...
}

func newCurator(t *testing.T) testCurator {
	t.Helper()
	key, err := curatorkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return testCurator{key: key, uri: curatorkey.URI(curatorkey.Public(key))}
}

// registryDoc is a small valid registry naming curatorURI as its curator.
// note goes into a description, so that two documents can share a version
// and differ in content.
func registryDoc(curatorURI, version, note string) []byte {
	return fmt.Appendf(nil, `{
  "version": %q,
  "updated": "2026-11-01",
  "curator": {"name": "A peer curator", "pubkey": %q},
  "endorsements": [],
  "categories": {
    "git-version-control": {
      "name": "Git Version Control",
      "description": "Using git day to day%s.",
      "query_patterns": ["learn git branching", "git rebase vs merge", "how to undo a git commit"],
      "sources": [
        {"rank": 1, "name": "Pro Git", "url": "https://git-scm.com/book/en/v2", "type": "book", "why": "The complete book on git."},
        {"rank": 2, "name": "Learn Git Branching", "url": "https://learngitbranching.js.org/", "type": "tutorial", "why": "Visual exercises on the commit graph."},
        {"rank": 3, "name": "Git reference manual", "url": "https://git-scm.com/docs", "type": "documentation", "why": "The authoritative page for every command."}
      ]
    }
  }
}
`, version, curatorURI, note)
}

func (c testCurator) sign(data []byte) []byte { return signatureAt(c, data, signedAt) }

func signatureAt(c testCurator, data []byte, at time.Time) []byte {
	return signature.Sign(data, c.key, at)
}

// signed is c's registry at version, signed by c.
func (c testCurator) signed(version, note string) (data, sig []byte) {
	data = registryDoc(c.uri, version, note)
	return data, c.sign(data)
}

// peerServer serves one peer's registry and signature the way 3gs serve
// --http does, at /registry and /registry.sig, and counts what it is
// asked.
type peerServer struct {
	*httptest.Server

	mu       sync.Mutex
	reg, sig []byte
	etag     string           // sent with the registry and honoured in If-None-Match
	registry http.HandlerFunc // when set, answers /registry instead
	other    http.HandlerFunc // when set, answers every other path (/audit)
	regHits  int
	sigHits  int
	lastINM  string // If-None-Match of the last registry request
}

func newPeerServer(t *testing.T) *peerServer {
	s := &peerServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *peerServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	switch r.URL.Path {
	case "/registry":
		s.regHits++
		s.lastINM = r.Header.Get("If-None-Match")
		h, reg, etag := s.registry, s.reg, s.etag
		s.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		if etag != "" {
			w.Header().Set("ETag", etag)
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(reg)
	case "/registry.sig":
		s.sigHits++
		sig := s.sig
		s.mu.Unlock()
		if sig == nil {
			http.NotFound(w, r)
			return
		}
		w.Write(sig)
	default:
		h := s.other
		s.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}
}

// publish makes the server answer with reg and sig (a nil sig: 404), and drops any
// special registry handler.
func (s *peerServer) publish(reg, sig []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reg, s.sig, s.registry = reg, sig, nil
}

// answer makes h answer the registry requests.
func (s *peerServer) answer(h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.registry = h
}

// answerOther makes h answer the paths other than the registry's and the
// signature's.
func (s *peerServer) answerOther(h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.other = h
}

func (s *peerServer) setETag(tag string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.etag = tag
}

func (s *peerServer) counts() (reg, sig int, inm string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.regHits, s.sigHits, s.lastINM
}

// fakeClock is Config.Now for tests: time moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// builtMatcher is what the test Build returns: a real matcher that
// remembers the registry it was built for, so a snapshot can be checked to
// pair a copy with its own matcher.
type builtMatcher struct {
	matcher.Matcher
	reg *registry.Registry
}

// Test settings; timeouts are only shortened by the tests about them.
const (
	testMaxBytes   = 16 << 10
	testRefresh    = time.Hour
	testStaleAfter = 6 * time.Hour
)

// harness is a Network with one endorsed peer served by a peerServer.
type harness struct {
	t      *testing.T
	net    *Network
	clock  *fakeClock
	builds atomic.Int32
	log    *testkit.SyncBuffer
	own    testCurator
	peer   testCurator
	srv    *peerServer
}

// newHarness starts a peer server and a Network whose clock starts at a
// whole second (the cache keeps seconds). tweak, when not nil, changes the
// configuration before the Network is made.
func newHarness(t *testing.T, tweak func(*Config)) *harness {
	t.Helper()
	h := &harness{
		t:     t,
		clock: &fakeClock{now: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)},
		log:   &testkit.SyncBuffer{},
		own:   newCurator(t),
		peer:  newCurator(t),
		srv:   newPeerServer(t),
	}
	h.net = h.newNetwork(tweak)
	return h
}

// newNetwork makes another Network with the harness's clock, log and
// build counter, as a restarted server would.
func (h *harness) newNetwork(tweak func(*Config)) *Network {
	cfg := Config{
		Fetcher:    NewFetcher(testMaxBytes, 5*time.Second).AsOperator(true),
		Refresh:    testRefresh,
		StaleAfter: testStaleAfter,
		Parallel:   2,
		Build: func(r *registry.Registry) matcher.Matcher {
			h.builds.Add(1)
			return &builtMatcher{Matcher: matcher.New(r), reg: r}
		},
		Log: slog.New(slog.NewTextHandler(h.log, nil)),
		Now: h.clock.Now,
	}
	if tweak != nil {
		tweak(&cfg)
	}
	return New(cfg)
}

func (h *harness) endorsement() gen.Endorsement {
	return gen.Endorsement{Pubkey: h.peer.uri, URL: h.srv.URL, Since: "2026-11-01"}
}

// endorse makes the harness's peer the network's one endorsement.
func (h *harness) endorse() { h.net.SetEndorsements(h.own.uri, []gen.Endorsement{h.endorsement()}) }

// refresh fetches every peer and returns when done.
func (h *harness) refresh() { h.net.Refresh(context.Background(), true) }

// only returns the network's single peer.
func (h *harness) only() Peer {
	h.t.Helper()
	return only(h.t, h.net)
}

func only(t *testing.T, n *Network) Peer {
	t.Helper()
	ps := n.Peers()
	if len(ps) != 1 {
		t.Fatalf("Peers() has %d peers, want 1", len(ps))
	}
	return ps[0]
}

// state returns the peer's internal state fields, read under the lock.
func (h *harness) state() (failures int, next time.Time) {
	h.net.mu.Lock()
	defer h.net.mu.Unlock()
	st := h.net.peers[h.peer.uri]
	return st.failures, st.next
}

// accept publishes version, fetches it and checks it was accepted; it
// returns the peer as Peers() then shows it.
func (h *harness) accept(version string) Peer {
	h.t.Helper()
	h.srv.publish(h.peer.signed(version, ""))
	h.refresh()
	p := h.only()
	if p.Status != Fresh || p.Reason != "" {
		h.t.Fatalf("after publishing %s: status %s, reason %q; want fresh and no reason", version, p.Status, p.Reason)
	}
	checkWhole(h.t, p)
	if got := p.Copy.Registry.Version(); got != version {
		h.t.Fatalf("accepted version %s, want %s", got, version)
	}
	return p
}

// checkWhole fails unless p's copy and matcher belong together.
func checkWhole(t *testing.T, p Peer) {
	t.Helper()
	if p.Copy == nil {
		if p.Matcher != nil {
			t.Errorf("peer %s has a matcher and no copy", p.Endorsement.Pubkey)
		}
		return
	}
	bm, ok := p.Matcher.(*builtMatcher)
	switch {
	case !ok:
		t.Errorf("peer %s has a copy (version %s) but matcher %T", p.Endorsement.Pubkey, p.Copy.Registry.Version(), p.Matcher)
	case bm.reg != p.Copy.Registry:
		t.Errorf("peer %s serves version %s with a matcher built for version %s", p.Endorsement.Pubkey, p.Copy.Registry.Version(), bm.reg.Version())
	}
}

// wantOutcome fails unless p has status want and a reason containing
// every one of reasons.
func wantOutcome(t *testing.T, p Peer, want Status, reasons ...string) {
	t.Helper()
	if p.Status != want {
		t.Errorf("status %s (reason %q), want %s", p.Status, p.Reason, want)
	}
	for _, r := range reasons {
		if !strings.Contains(p.Reason, r) {
			t.Errorf("reason %q does not mention %q", p.Reason, r)
		}
	}
	// Whatever the detail, what anyone may see is one of the coarse
	// reasons, and a failure to reach the peer is only that.
	if want == Refused || want == Unreachable {
		if !slices.Contains(PublicReasons, p.Public) || (want == Unreachable) != (p.Public == "unreachable") {
			t.Errorf("status %s with public reason %q", p.Status, p.Public)
		}
	}
}

// wantPublic fails unless p's public reason is want.
func wantPublic(t *testing.T, p Peer, want string) {
	t.Helper()
	if p.Public != want {
		t.Errorf("public reason %q (reason %q), want %q", p.Public, p.Reason, want)
	}
}

// wantKept fails unless p still serves good's copy and matcher, unchanged.
func wantKept(t *testing.T, p, good Peer) {
	t.Helper()
	if p.Copy != good.Copy {
		t.Errorf("the copy changed: %+v, want the last accepted one", p.Copy)
	}
	if p.Matcher != good.Matcher {
		t.Errorf("the matcher changed")
	}
	checkWhole(t, p)
}

// acceptThenFail accepts version 1.0.0, lets spoil change what the peer
// serves, refreshes a minute later and checks the outcome is want with
// reasons in its reason, and that the accepted copy keeps serving.
func acceptThenFail(t *testing.T, h *harness, spoil func(h *harness), want Status, reasons ...string) Peer {
	t.Helper()
	h.endorse()
	good := h.accept("1.0.0")
	spoil(h)
	at := h.clock.Add(time.Minute)
	h.refresh()
	p := h.only()
	wantOutcome(t, p, want, reasons...)
	wantKept(t, p, good)
	if !p.LastAttempt.Equal(at) {
		t.Errorf("LastAttempt %v, want %v", p.LastAttempt, at)
	}
	if f, _ := h.state(); f != 1 {
		t.Errorf("%d failures recorded, want 1", f)
	}
	return p
}

func pkarrKey(t *testing.T, uri string) ed25519.PublicKey {
	t.Helper()
	k, err := curatorkey.ParsePublicKey(uri)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
