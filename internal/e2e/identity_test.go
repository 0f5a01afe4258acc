package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// identitySite is a loopback web site where curators prove their keys:
// a page with A's key, one without it, the origin's
// /.well-known/3gs.json naming A's key, and a page with B's key. It is
// also where B publishes its signed registry (regB, as a node does), so
// B's link is on the origin A endorses B at: a peer's link may name a
// loopback address only there. Every other path is 404, so the origin
// verifies through its proof file alone.
func identitySite(t *testing.T, a, b, regB string) *httptest.Server {
	t.Helper()
	pages := map[string]string{
		"/a":                    "<html><body><p>My 3gs curator key is " + a + ".</p></body></html>",
		"/nothing":              "<html><body><p>No key on this page.</p></body></html>",
		"/.well-known/3gs.json": `{"pubkey":"` + a + `"}`,
		"/b":                    "<html><body>" + b + "</body></html>",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			reg, _ := os.ReadFile(regB)
			sig, _ := os.ReadFile(regB + ".sig")
			testkit.ServeRegistry(w, r, reg, sig)
			return
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A real node on loopback, A, endorsing B, which publishes its signed
// registry on a loopback site where both claim links: A's page with its
// key verifies, its page without the key fails, its bare origin verifies
// through /.well-known/3gs.json; B's link, read from B's signed registry,
// verifies too and shows in A's get_endorsements and
// get_federated_sources.
func TestIdentityLinksVerifyOnLoopback(t *testing.T) {
	t.Parallel() // its own processes, ports and files
	bin := testkit.Binary(t)
	a, b := curator.New(t, "a"), curator.New(t, "b")
	site := identitySite(t, a.Pub, b.Pub, b.Registry)

	docB := oneTopic("Baker B", "sourdough-starters", "Sourdough Starters", "sourdough starter feeding",
		[3]string{"https://b.example/one", "https://b.example/two", "https://b.example/three"})
	docB.Curator.Links = []string{site.URL + "/b"}
	b.Write(t, docB)

	docA := oneTopic("Ada A", "garden-birds", "Garden Birdwatching", "identify garden birds",
		[3]string{"https://a.example/one", "https://a.example/two", "https://a.example/three"})
	docA.Curator.Links = []string{site.URL + "/a", site.URL + "/nothing", site.URL}
	docA.Endorsements = []gen.Endorsement{{Pubkey: b.Pub, URL: site.URL, Name: ptrTo("Baker B"), Since: "2026-11-25"}}
	a.Write(t, docA)
	sa := testkit.Serve(t, bin, "--registry", a.Registry, "--key-file", a.KeyFile, "--identity-refresh", "10s")

	own := waitIdentity(t, sa, map[string]any{}, 3)
	want := []struct {
		url, status, reason string
	}{
		{site.URL + "/a", "verified", ""},
		{site.URL + "/nothing", "failed", "key not found"},
		{site.URL, "verified", ""},
	}
	for i, w := range want {
		l := own.Links[i]
		if l.URL != w.url || string(l.Status) != w.status || string(deref(l.Reason)) != w.reason || l.CheckedAt == nil {
			t.Errorf("A's links[%d] = %+v, want %s %s %s", i, l, w.url, w.status, w.reason)
		}
	}
	shown, _ := json.MarshalIndent(own, "", "  ")
	t.Logf("get_identity of A:\n%s", shown)
	if own.Pubkey != a.Pub || own.Role == nil || *own.Role != gen.GetIdentityOutputRoleOwn {
		t.Errorf("A's identity: %+v", own)
	}

	peerID := waitIdentity(t, sa, map[string]any{"pubkey": b.Pub}, 1)
	if peerID.Role == nil || *peerID.Role != gen.GetIdentityOutputRoleEndorsed || peerID.Links[0].URL != site.URL+"/b" {
		t.Errorf("B's identity through A: %+v", peerID)
	}
	var ends gen.GetEndorsementsOutput
	callTool(t, sa.URL, "get_endorsements", map[string]any{}, &ends)
	if len(ends.Endorsements) != 1 || !slices.Equal(ends.Endorsements[0].VerifiedLinks, []string{site.URL + "/b"}) {
		t.Errorf("get_endorsements: %+v", ends)
	}
	var fed gen.GetFederatedSourcesOutput
	callTool(t, sa.URL, "get_federated_sources", map[string]any{"query": "how often should I feed my sourdough starter"}, &fed)
	if len(fed.Peers) != 1 || !slices.Equal(fed.Peers[0].VerifiedLinks, []string{site.URL + "/b"}) {
		t.Errorf("get_federated_sources peers: %+v", fed.Peers)
	}
	// What was found is kept beside A's registry for the next start.
	if data, err := os.ReadFile(a.Registry + ".identity.json"); err != nil || !bytes.Contains(data, []byte(`"key not found"`)) {
		t.Errorf("identity cache beside the registry: %v\n%s", err, data)
	}
}

// waitIdentity calls get_identity with args until it reports n links,
// none pending, for at most a minute: the checks run in the background.
func waitIdentity(t *testing.T, s *testkit.Server, args map[string]any, n int) gen.GetIdentityOutput {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var out gen.GetIdentityOutput
		callTool(t, s.URL, "get_identity", args, &out)
		done := len(out.Links) == n
		for _, l := range out.Links {
			done = done && l.Status != gen.IdentityLinkStatusPending
		}
		if done {
			return out
		}
		if time.Now().After(deadline) {
			got, _ := json.Marshal(out)
			t.Fatalf("get_identity %v never settled on %d checked links; last %s\nserver log:\n%s", args, n, got, s.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
