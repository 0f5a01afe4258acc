package e2e

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// curatorNode is one curator's key and signed registry on disk.
type curatorNode struct {
	key     ed25519.PrivateKey
	pubkey  string
	dir     string
	reg     string // registry path
	keyPath string
}

func newCurator(t *testing.T, name string) *curatorNode {
	t.Helper()
	key, err := pkarr.Generate()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := &curatorNode{key: key, pubkey: pkarr.URI(pkarr.Public(key)), dir: dir, reg: filepath.Join(dir, "registry.json"), keyPath: filepath.Join(dir, "curator.key")}
	if err := pkarr.WriteKeyFile(n.keyPath, key); err != nil {
		t.Fatal(err)
	}
	return n
}

// write signs doc as this curator's registry.
func (n *curatorNode) write(t *testing.T, doc gen.Registry) {
	t.Helper()
	doc.Curator.Pubkey = n.pubkey
	if _, err := signature.WriteSigned(n.reg, gen.EncodeRegistry(&doc), n.key, time.Now(), 0o644); err != nil {
		t.Fatal(err)
	}
}

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
// returns its structuredContent.
func callTool(t *testing.T, mcpURL, tool string, args any, out any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}},
	})
	req, _ := http.NewRequest(http.MethodPost, mcpURL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var msg struct {
		Result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil || msg.Error != nil || msg.Result.IsError {
		t.Fatalf("%s: HTTP %d: %s", tool, resp.StatusCode, data)
	}
	if err := json.Unmarshal(msg.Result.StructuredContent, out); err != nil {
		t.Fatalf("%s: %v: %s", tool, err, data)
	}
}

// waitPeers polls /health until want(peers) holds, for at most a minute: the
// first round of fetches starts when the server starts and never blocks it.
func waitPeers(t *testing.T, s *httpServer, want func(gen.HealthPeers) bool) gen.HealthPeers {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var h gen.Health
		resp, err := http.Get(nodeURL(s.url) + "/health")
		if err == nil {
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			json.Unmarshal(data, &h)
		}
		if h.Peers != nil && want(*h.Peers) {
			return *h.Peers
		}
		if time.Now().After(deadline) {
			t.Fatalf("peers never reached the expected state; last /health peers %+v\nserver log:\n%s", h.Peers, s.stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Three real nodes on loopback: A endorses B and C, and answers a topic
// only B covers through get_federated_sources, with B's sources tagged
// with B's key; get_endorsements and /health report both peers fresh.
// Restarted with B down, A serves B's copy from its cache, marked stale.
func TestThreeNodeFederation(t *testing.T) {
	bin := buildBinary(t)
	a, b, c := newCurator(t, "a"), newCurator(t, "b"), newCurator(t, "c")
	b.write(t, oneTopic("Baker B", "sourdough-starters", "Sourdough Starters", "sourdough starter feeding",
		[3]string{"https://b.example/one", "https://b.example/two", "https://b.example/three"}))
	c.write(t, oneTopic("Birder C", "garden-birds", "Garden Birdwatching", "identify garden birds",
		[3]string{"https://c.example/one", "https://c.example/two", "https://c.example/three"}))
	sb := startHTTP(t, bin, "--registry", b.reg, "--key-file", b.keyPath)
	sc := startHTTP(t, bin, "--registry", c.reg, "--key-file", c.keyPath)

	base, err := registry.Load(threegs.DefaultRegistry)
	if err != nil {
		t.Fatal(err)
	}
	doc := base.Document()
	doc.Endorsements = []gen.Endorsement{
		{Pubkey: b.pubkey, URL: nodeURL(sb.url), Name: ptrTo("Baker B"), Since: "2026-11-25"},
		{Pubkey: c.pubkey, URL: nodeURL(sc.url) + "/", Name: ptrTo("Birder C"), Since: "2026-11-25"},
	}
	a.write(t, doc)
	cache := filepath.Join(a.dir, "peers")
	sa := startHTTP(t, bin, "--registry", a.reg, "--key-file", a.keyPath, "--peer-cache", cache)
	waitPeers(t, sa, func(p gen.HealthPeers) bool { return p.Endorsed == 2 && p.Fresh == 2 })

	var fed gen.GetFederatedSourcesOutput
	callTool(t, sa.url, "get_federated_sources", map[string]any{"query": "how often should I feed my sourdough starter"}, &fed)
	var fromB *gen.FederatedResult
	for i, r := range fed.Results {
		if r.Trust == gen.FederatedResultTrustOwn {
			t.Errorf("A's own registry answered a topic only B covers: %+v", r)
		}
		if r.Curator.Pubkey == b.pubkey {
			fromB = &fed.Results[i]
		}
	}
	if fromB == nil || fromB.Slug != "sourdough-starters" || fromB.Trust != gen.FederatedResultTrustEndorsed || fromB.Stale ||
		len(fromB.Sources) != 3 || fromB.Sources[0].URL != "https://b.example/one" || fromB.FetchedAt == nil {
		t.Fatalf("want B's sourdough category tagged with B's key, got %+v", fed)
	}
	// Our own topics still come first, tagged own.
	callTool(t, sa.url, "get_federated_sources", map[string]any{"query": "learn rust ownership"}, &fed)
	if len(fed.Results) == 0 || fed.Results[0].Trust != gen.FederatedResultTrustOwn || fed.Results[0].Slug != "rust-learning" {
		t.Fatalf("own answer not first: %+v", fed.Results)
	}

	var ends gen.GetEndorsementsOutput
	callTool(t, sa.url, "get_endorsements", map[string]any{}, &ends)
	if len(ends.Endorsements) != 2 {
		t.Fatalf("endorsements: %+v", ends)
	}
	for _, e := range ends.Endorsements {
		if e.Status != gen.EndorsedPeerStatusFresh || e.Version == nil || *e.Version != "1.0.0" || e.Categories == nil || *e.Categories != 1 {
			t.Errorf("endorsement %s: %+v", e.Pubkey, e)
		}
	}

	// doctor fetches each peer once and says whether it verifies.
	out, _ := exec.Command(bin, "doctor", "--registry", a.reg, "--key-file", a.keyPath).CombinedOutput()
	for _, want := range []string{"OK    peers: Baker B (" + b.pubkey + ") verifies: version 1.0.0, 1 category", "OK    peers: Birder C (" + c.pubkey + ") verifies"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}

	// B goes down and A restarts: B's verified copy is served from the
	// cache at once (stale, with a 1 ms stale age), and its status says
	// B cannot be reached.
	sb.cmd.Process.Signal(syscall.SIGTERM)
	<-sb.done
	sb.cmd.Wait()
	sa.cmd.Process.Signal(syscall.SIGTERM)
	<-sa.done
	sa.cmd.Wait()
	sa = startHTTP(t, bin, "--registry", a.reg, "--key-file", a.keyPath, "--peer-cache", cache, "--peer-stale", "1ms", "--peer-timeout", "2s")
	waitPeers(t, sa, func(p gen.HealthPeers) bool { return p.Unreachable == 1 })
	callTool(t, sa.url, "get_federated_sources", map[string]any{"query": "sourdough starter feeding"}, &fed)
	fromB = nil
	for i, r := range fed.Results {
		if r.Curator.Pubkey == b.pubkey {
			fromB = &fed.Results[i]
		}
	}
	if fromB == nil || !fromB.Stale || fromB.Slug != "sourdough-starters" {
		t.Fatalf("with B down, want B's cached copy marked stale, got %+v", fed)
	}
	callTool(t, sa.url, "get_endorsements", map[string]any{}, &ends)
	for _, e := range ends.Endorsements {
		if e.Pubkey == b.pubkey && (e.Status != gen.EndorsedPeerStatusUnreachable || e.Reason == nil || e.Version == nil) {
			t.Errorf("B while down: %+v", e)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
