package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// hitCounter is a service on another loopback port, standing for the
// replica's internal network: it holds the origin curator's key on every
// page and a peer's signed registry, and counts who asked for what.
type hitCounter struct {
	mu   sync.Mutex
	hits []string
}

func (h *hitCounter) add(path string) {
	h.mu.Lock()
	h.hits = append(h.hits, path)
	h.mu.Unlock()
}

func (h *hitCounter) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.hits)
}

func (h *hitCounter) since(n int) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.hits[n:]...)
}

// A read replica follows an origin whose registry (the origin curator's
// own, signed) names http://127.0.0.1:PORT/... of another service on
// the machine: as the curator's link, as all three sources, and as an
// endorsed peer. The origin fetches them: they are its operator's. The
// replica fetches none of them, publishes no health for the sources, and
// reports the link and the peer refused, with no command to fetch the
// link by hand. Before, it checked all three kinds as its own operator's
// and published verified, ok and fresh: a probe of its network for
// whoever can publish through the origin.
func TestReplicaDoesNotFetchTheOriginsLoopbackURLs(t *testing.T) {
	t.Parallel() // its own processes, ports and files
	bin := testkit.Binary(t)
	o, p := curator.New(t, "origin"), curator.New(t, "peer")
	p.Write(t, oneTopic("Peer", "peer-topic", "Peer topic", "about the peer", [3]string{"https://p.example/1", "https://p.example/2", "https://p.example/3"}))
	peerReg, _ := os.ReadFile(p.Registry)
	peerSig, _ := os.ReadFile(p.Registry + ".sig")
	hc := &hitCounter{}
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hc.add(r.URL.Path)
		if strings.HasPrefix(r.URL.Path, "/registry") {
			testkit.ServeRegistry(w, r, peerReg, peerSig)
			return
		}
		io.WriteString(w, "<p>"+o.Pub+"</p>")
	}))
	t.Cleanup(internal.Close)

	doc := oneTopic("Origin", "origin-topic", "Origin topic", "about the origin", [3]string{internal.URL + "/s1", internal.URL + "/s2", internal.URL + "/s3"})
	doc.Curator.Links = []string{internal.URL + "/me"}
	doc.Endorsements = []gen.Endorsement{{Pubkey: p.Pub, URL: internal.URL, Name: ptrTo("Peer"), Since: "2026-11-25"}}
	o.Write(t, doc)
	origin := testkit.Serve(t, bin, "--registry", o.Registry, "--key-file", o.KeyFile)
	// The origin's own checks, its operator's choice, settle first: its
	// link verifies and its peer is fetched; then nothing of it is due for
	// minutes (--peer-refresh 5m, --identity-refresh 24h).
	if l := waitIdentity(t, origin, map[string]any{}, 1).Links[0]; l.Status != gen.IdentityLinkStatusVerified {
		t.Fatalf("the origin's own link: %+v", l)
	}
	waitPeers(t, origin, func(h gen.HealthPeers) bool { return h.Fresh == 1 })
	before := quiet(t, hc)

	replica := testkit.Serve(t, bin, "--follow", nodeURL(origin.URL), "--follow-pubkey", o.Pub, "--follow-cache", filepath.Join(t.TempDir(), "cache"),
		"--check-sources", "1s", "--identity-refresh", "10s")
	link := waitIdentity(t, replica, map[string]any{}, 1).Links[0]
	if link.Status != gen.IdentityLinkStatusFailed || string(deref(link.Reason)) != "refused: address not allowed" || link.Check != "" {
		t.Errorf("the replica's get_identity of the origin's loopback link: %+v, want failed, refused, no check command", link)
	}
	waitPeers(t, replica, func(h gen.HealthPeers) bool { return h.Refused == 1 })
	var h gen.Health
	testkit.WaitFor(t, "the replica's /health to report a source check", time.Minute, func() bool {
		resp, err := http.Get(nodeURL(replica.URL) + "/health")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(&h) == nil && h.Sources != nil
	})
	if s := h.Sources; s.Ok+s.Error+s.Gone+s.Changed+s.Redirected != 0 {
		t.Errorf("the replica's /health publishes the health of sources it must not fetch: %+v", *s)
	}
	var srcs gen.GetSourcesOutput
	callTool(t, replica.URL, "get_sources", map[string]any{"slug": "origin-topic"}, &srcs)
	for _, s := range srcs.Sources {
		if s.Health != nil {
			t.Errorf("get_sources on the replica: source %d has health %+v", s.Rank, *s.Health)
		}
	}
	if got := hc.since(before); len(got) > 0 {
		t.Errorf("the replica asked the internal service for %v\nreplica log:\n%s", got, notable(replica.Stderr()))
	}
}

// quiet waits until the service has had no request for a second (the
// origin's round of checks is over) and returns the count then.
func quiet(t *testing.T, hc *hitCounter) int {
	t.Helper()
	n := hc.count()
	testkit.WaitFor(t, "the origin's checks to end", 30*time.Second, func() bool {
		time.Sleep(time.Second)
		m := hc.count()
		defer func() { n = m }()
		return m == n
	})
	return n
}
