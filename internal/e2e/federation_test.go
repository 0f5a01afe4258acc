package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// oneTopic is a registry of a single category, a topic our own registry
// does not cover, so only its curator can answer it.
func oneTopic(name, slug, title, pattern string, urls [3]string) gen.Registry {
	doc := gen.Registry{
		Version: "1.0.0", Updated: "2026-11-25",
		Curator:      gen.Curator{Name: name},
		Endorsements: []gen.Endorsement{},
		Categories:   map[string]gen.Category{},
	}
	cat := gen.Category{Name: title, Description: title + ", from first steps to habits that last.", QueryPatterns: []string{pattern, strings.ToLower(title), "getting started with " + strings.ToLower(title)}}
	for i, u := range urls {
		cat.Sources = append(cat.Sources, gen.Source{Rank: i + 1, Name: fmt.Sprintf("%s source %d", title, i+1), URL: u, Type: gen.SourceTypeArticle, Why: "Chosen by " + name + " for this topic."})
	}
	doc.Categories[slug] = cat
	return doc
}

// nodeURL is the base URL of a server whose /mcp URL is mcpURL.
func nodeURL(mcpURL string) string { return strings.TrimSuffix(mcpURL, "/mcp") }

// callTool calls a tool over the 2026-07-28 stateless HTTP transport and
// decodes its structuredContent into out; an error result fails the test.
func callTool(t *testing.T, mcpURL, tool string, args any, out any) {
	t.Helper()
	a := testkit.CallTool(t, mcpURL, tool, args)
	if a.IsError {
		t.Fatalf("%s: error result: %s", tool, a.Text)
	}
	if err := json.Unmarshal(a.Structured, out); err != nil {
		t.Fatalf("%s: %v: %s", tool, err, a.Structured)
	}
}

// waitPeers polls /health until want(peers) holds, for at most a minute: the
// first round of fetches starts when the server starts and never blocks it.
func waitPeers(t *testing.T, s *testkit.Server, want func(gen.HealthPeers) bool) gen.HealthPeers {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var h gen.Health
		resp, err := http.Get(nodeURL(s.URL) + "/health")
		if err == nil {
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			json.Unmarshal(data, &h)
		}
		if h.Peers != nil && want(*h.Peers) {
			return *h.Peers
		}
		if time.Now().After(deadline) {
			t.Fatalf("peers never reached the expected state; last /health peers %+v\nserver log:\n%s", h.Peers, s.Stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Three real nodes on loopback: A endorses B and C, and answers a topic
// only B covers through get_federated_sources, with B's sources tagged
// with B's key; get_endorsements and /health report both peers fresh.
// Restarted with B down, A serves B's copy from its cache, marked stale.
func TestThreeNodeFederation(t *testing.T) {
	t.Parallel() // its own processes, ports and files
	bin := testkit.Binary(t)
	a, b, c := curator.New(t, "a"), curator.New(t, "b"), curator.New(t, "c")
	b.Write(t, oneTopic("Baker B", "sourdough-starters", "Sourdough Starters", "sourdough starter feeding",
		[3]string{"https://b.example/one", "https://b.example/two", "https://b.example/three"}))
	c.Write(t, oneTopic("Birder C", "garden-birds", "Garden Birdwatching", "identify garden birds",
		[3]string{"https://c.example/one", "https://c.example/two", "https://c.example/three"}))
	sb := testkit.Serve(t, bin, "--registry", b.Registry, "--key-file", b.KeyFile)
	sc := testkit.Serve(t, bin, "--registry", c.Registry, "--key-file", c.KeyFile)

	doc := curator.Basic(t)
	doc.Endorsements = []gen.Endorsement{
		{Pubkey: b.Pub, URL: nodeURL(sb.URL), Name: ptrTo("Baker B"), Since: "2026-11-25"},
		{Pubkey: c.Pub, URL: nodeURL(sc.URL) + "/", Name: ptrTo("Birder C"), Since: "2026-11-25"},
	}
	a.Write(t, doc)
	cache := filepath.Join(a.Dir, "peers")
	sa := testkit.Serve(t, bin, "--registry", a.Registry, "--key-file", a.KeyFile, "--peer-cache", cache)
	waitPeers(t, sa, func(p gen.HealthPeers) bool { return p.Endorsed == 2 && p.Fresh == 2 })

	var fed gen.GetFederatedSourcesOutput
	callTool(t, sa.URL, "get_federated_sources", map[string]any{"query": "how often should I feed my sourdough starter"}, &fed)
	var fromB *gen.FederatedResult
	for i, r := range fed.Results {
		if r.Trust == gen.TrustOwn {
			t.Errorf("A's own registry answered a topic only B covers: %+v", r)
		}
		if r.Curator.Pubkey == b.Pub {
			fromB = &fed.Results[i]
		}
	}
	if fromB == nil || fromB.Slug != "sourdough-starters" || fromB.Trust != gen.TrustEndorsed || fromB.Stale ||
		len(fromB.Sources) != 3 || fromB.Sources[0].URL != "https://b.example/one" || fromB.FetchedAt == nil {
		t.Fatalf("want B's sourdough category tagged with B's key, got %+v", fed)
	}
	// Our own topics still come first, tagged own.
	callTool(t, sa.URL, "get_federated_sources", map[string]any{"query": "learn rust ownership"}, &fed)
	if len(fed.Results) == 0 || fed.Results[0].Trust != gen.TrustOwn || fed.Results[0].Slug != "rust-learning" {
		t.Fatalf("own answer not first: %+v", fed.Results)
	}

	var ends gen.GetEndorsementsOutput
	callTool(t, sa.URL, "get_endorsements", map[string]any{}, &ends)
	if len(ends.Endorsements) != 2 {
		t.Fatalf("endorsements: %+v", ends)
	}
	for _, e := range ends.Endorsements {
		if e.Status != gen.EndorsedPeerStatusFresh || e.Version == nil || *e.Version != "1.0.0" || e.Categories == nil || *e.Categories != 1 {
			t.Errorf("endorsement %s: %+v", e.Pubkey, e)
		}
	}

	// doctor fetches each peer once and says whether it verifies.
	out, _ := exec.Command(bin, "doctor", "--registry", a.Registry, "--key-file", a.KeyFile).CombinedOutput()
	for _, want := range []string{"OK    peers: Baker B (" + b.Pub + ") verifies: version 1.0.0, 1 category", "OK    peers: Birder C (" + c.Pub + ") verifies"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}

	// B goes down and A restarts: B's verified copy is served from the
	// cache at once (stale, with a 1 ms stale age), and its status says
	// B cannot be reached.
	sb.Cmd.Process.Signal(syscall.SIGTERM)
	<-sb.Done
	sb.Cmd.Wait()
	sa.Cmd.Process.Signal(syscall.SIGTERM)
	<-sa.Done
	sa.Cmd.Wait()
	sa = testkit.Serve(t, bin, "--registry", a.Registry, "--key-file", a.KeyFile, "--peer-cache", cache, "--peer-stale", "1ms", "--peer-timeout", "2s")
	waitPeers(t, sa, func(p gen.HealthPeers) bool { return p.Unreachable == 1 })
	callTool(t, sa.URL, "get_federated_sources", map[string]any{"query": "sourdough starter feeding"}, &fed)
	fromB = nil
	for i, r := range fed.Results {
		if r.Curator.Pubkey == b.Pub {
			fromB = &fed.Results[i]
		}
	}
	if fromB == nil || !fromB.Stale || fromB.Slug != "sourdough-starters" {
		t.Fatalf("with B down, want B's cached copy marked stale, got %+v", fed)
	}
	callTool(t, sa.URL, "get_endorsements", map[string]any{}, &ends)
	for _, e := range ends.Endorsements {
		if e.Pubkey == b.Pub && (e.Status != gen.EndorsedPeerStatusUnreachable || e.Reason == nil || e.Version == nil) {
			t.Errorf("B while down: %+v", e)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
