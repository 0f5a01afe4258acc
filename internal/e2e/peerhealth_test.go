package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/linkcheck/linkchecktest"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// B checks its sources (serve --check-sources) and publishes the health
// file signed with its key; A, which endorses B, shows each of B's
// sources' health in get_federated_sources once the signature verifies.
func TestPeersSourceHealth(t *testing.T) {
	t.Parallel() // its own processes, ports and files
	bin := testkit.Binary(t)
	site := linkchecktest.NewSite(t, 0)
	a, b := curator.New(t, "a"), curator.New(t, "b")
	b.Write(t, oneTopic("Baker B", "sourdough-starters", "Sourdough Starters", "sourdough starter feeding",
		[3]string{site.URL + "/ok", site.URL + "/404", site.URL + "/ok?second"}))
	sb := testkit.Serve(t, bin, "--registry", b.Registry, "--key-file", b.KeyFile, "--check-sources", "1s")
	c := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"/registry.health.json", "/registry.health.json.sig"} {
		testkit.WaitFor(t, "B to publish "+path, 90*time.Second, func() bool {
			resp, err := c.Get(nodeURL(sb.URL) + path)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}

	doc := curator.Doc()
	doc.Endorsements = []gen.Endorsement{{Pubkey: b.Pub, URL: nodeURL(sb.URL), Name: ptrTo("Baker B"), Since: "2026-11-25"}}
	a.Write(t, doc)
	sa := testkit.Serve(t, bin, "--registry", a.Registry, "--key-file", a.KeyFile)
	waitPeers(t, sa, func(p gen.HealthPeers) bool { return p.Fresh == 1 })

	var fed gen.GetFederatedSourcesOutput
	callTool(t, sa.URL, "get_federated_sources", map[string]any{"query": "how often should I feed my sourdough starter"}, &fed)
	if len(fed.Results) != 1 || len(fed.Results[0].Sources) != 3 {
		t.Fatalf("want B's category, got %+v", fed)
	}
	want := []gen.CheckStatus{"ok", "gone", "ok"}
	for i, s := range fed.Results[0].Sources {
		if s.Health == nil || s.Health.Status != want[i] {
			t.Errorf("B's source %d (%s): health %+v, want %s\nA's log:\n%s", i+1, s.URL, s.Health, want[i], sa.Stderr())
		}
	}
}
