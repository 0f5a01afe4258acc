package e2e

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// proposalNode is a curator's node made as a curator makes one (3gs
// init), endorsing the curator whose key is at endorsedKey; it returns
// the registry and key paths.
func proposalNode(t *testing.T, bin string, endorsedKey string) (reg, key string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "node")
	runOK(t, bin, "init", dir, "--name", "Node A")
	reg, key = filepath.Join(dir, "registry.json"), filepath.Join(dir, "curator.key")
	if endorsedKey != "" {
		pk := regexp.MustCompile(`pk:[a-z0-9]{52}`).FindString(runOK(t, bin, "keygen", "--out", endorsedKey))
		runOK(t, bin, "endorse", "--pubkey", pk, "--url", "https://peer.example", "--key-file", key, reg)
	}
	return reg, key
}

func stop(t *testing.T, s *testkit.Server) {
	t.Helper()
	s.Cmd.Process.Signal(syscall.SIGTERM)
	<-s.Done
	s.Cmd.Wait()
}

func sqliteProposal() map[string]any {
	return map[string]any{
		"action": "add_category", "slug": "sqlite-learning", "reason": "No category covers SQLite.",
		"category": map[string]any{
			"name": "Learning SQLite", "description": "Using SQLite, the embedded SQL database.",
			"query_patterns": []string{"learn sqlite", "sqlite tutorial", "embedded sql database"},
			"sources": []map[string]any{
				{"rank": 1, "name": "SQLite documentation", "url": "https://sqlite.org/docs.html", "type": "documentation", "why": "Its authors explain every feature."},
				{"rank": 2, "name": "SQLite Tutorial", "url": "https://www.sqlitetutorial.net/", "type": "tutorial", "why": "Works through SQL with SQLite step by step."},
				{"rank": 3, "name": "SQLite Forum", "url": "https://sqlite.org/forum/", "type": "forum", "why": "Where the developers answer questions."},
			},
		},
	}
}

// The whole path on loopback with real processes: an agent proposes a
// category over MCP; the endorsed curator votes with the CLI, and a key
// the node does not endorse is refused; with the server stopped the
// curator accepts with the CLI on the files (TestCuratorActsOnARunningNode
// accepts through a running server); the restarted server answers get_sources from the new category,
// and the audit log verifies, with the entry naming the proposal.
func TestProposalAcceptedEndToEnd(t *testing.T) {
	bin := testkit.Binary(t)
	peerKey := filepath.Join(t.TempDir(), "peer.key")
	reg, key := proposalNode(t, bin, peerKey)
	srv := testkit.Serve(t, bin, "--registry", reg, "--key-file", key)

	var proposed gen.ProposeChangeOutput
	callTool(t, srv.URL, gen.ToolProposeChange, sqliteProposal(), &proposed)
	if !proposed.Recorded || proposed.ID == nil {
		t.Fatalf("propose_change: %+v", proposed)
	}
	id := *proposed.ID
	// The voter names the key they expect (TestVoteBoundToTheNodeMeant
	// covers why); here it is the node's own answer, as the test knows.
	var asked gen.GetProposalOutput
	callTool(t, srv.URL, gen.ToolGetProposal, map[string]any{"id": id}, &asked)
	nodeKey := *asked.NodePubkey

	if code, out := run3gs(t, bin, "proposals", "vote", id, "support", "--key-file", peerKey, "--node", nodeURL(srv.URL), "--node-pubkey", nodeKey); code != 0 || !strings.Contains(out, "1 for, 0 against") {
		t.Fatalf("the endorsed curator's vote: exit %d\n%s", code, out)
	}
	stranger := filepath.Join(t.TempDir(), "stranger.key")
	runOK(t, bin, "keygen", "--out", stranger)
	if code, out := run3gs(t, bin, "proposals", "vote", id, "oppose", "--key-file", stranger, "--node", nodeURL(srv.URL), "--node-pubkey", nodeKey); code != 1 || !strings.Contains(out, "not a curator this node's signed registry endorses") {
		t.Errorf("a vote by a key the node does not endorse: exit %d\n%s", code, out)
	}
	stop(t, srv)

	out := runOK(t, bin, "proposals", "accept", id, "--registry", reg, "--key-file", key, "--reason", "welcome")
	if !strings.Contains(out, "Accepted proposal "+id) {
		t.Errorf("3gs proposals accept printed:\n%s", out)
	}
	srv = testkit.Serve(t, bin, "--registry", reg, "--key-file", key)
	var got gen.GetSourcesOutput
	callTool(t, srv.URL, gen.ToolGetSources, map[string]any{"slug": "sqlite-learning"}, &got)
	if len(got.Sources) != 3 || got.Sources[0].URL != "https://sqlite.org/docs.html" {
		t.Errorf("get_sources after accepting: %+v", got.Sources)
	}
	var shown gen.GetProposalOutput
	callTool(t, srv.URL, gen.ToolGetProposal, map[string]any{"id": id}, &shown)
	if p := shown.Proposal; p == nil || p.Status != gen.ProposalStatusAccepted || p.Support != 1 || p.Oppose != 0 || p.Decision == nil || p.Decision.RegistryVersion == nil {
		t.Errorf("get_proposal after accepting: %+v", shown.Proposal)
	}
	runOK(t, bin, "audit", "verify", reg)
	if log := runOK(t, bin, "audit", "log", reg, "--slug", "sqlite-learning"); !strings.Contains(log, "proposal "+id) {
		t.Errorf("the audit log does not name the proposal:\n%s", log)
	}
}

// A flood of proposals is bounded: one client gets --proposal-rate, many
// clients together --max-pending-proposals, and get_sources answers
// throughout and after.
func TestProposalFloodIsBounded(t *testing.T) {
	bin := testkit.Binary(t)
	reg, key := proposalNode(t, bin, "")
	srv := testkit.Serve(t, bin, "--registry", reg, "--key-file", key, "--max-pending-proposals", "20", "--proposal-rate", "5")
	var cats gen.ListCategoriesOutput
	callTool(t, srv.URL, gen.ToolListCategories, map[string]any{}, &cats)
	slug := cats.Categories[0].Slug
	report := map[string]any{"action": "report_dead_source", "slug": slug, "rank": 1, "reason": "It answers 404."}

	// One client (one address, no session): the rate stops it at 5.
	recorded := 0
	for range 8 {
		if a := testkit.CallTool(t, srv.URL, gen.ToolProposeChange, report); !a.IsError {
			recorded++
		} else if !strings.Contains(a.Text, "--proposal-rate") {
			t.Fatalf("a refusal that does not name the rate: %s", a.Text)
		}
	}
	if recorded != 5 {
		t.Errorf("one client recorded %d proposals, want 5 (--proposal-rate)", recorded)
	}
	// Every test client comes from 127.0.0.1, so the cap is reached with
	// the rate raised: many calls at once, kept pending across a restart.
	stop(t, srv)
	srv = testkit.Serve(t, bin, "--registry", reg, "--key-file", key, "--max-pending-proposals", "20", "--proposal-rate", "1000")
	var wg sync.WaitGroup
	var mu sync.Mutex
	capped := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				a := testkit.CallTool(t, srv.URL, gen.ToolProposeChange, report)
				if a.IsError && strings.Contains(a.Text, "--max-pending-proposals") {
					mu.Lock()
					capped++
					mu.Unlock()
				}
			}
		}()
	}
	var got gen.GetSourcesOutput
	callTool(t, srv.URL, gen.ToolGetSources, map[string]any{"slug": slug}, &got)
	wg.Wait()
	var list gen.ListProposalsOutput
	callTool(t, srv.URL, gen.ToolListProposals, map[string]any{"status": "pending"}, &list)
	if list.Pending != 20 || capped != 40-15 {
		t.Errorf("after 40 more proposals with 5 waiting and a cap of 20: %d pending, %d refused at the cap; want 20 and 25", list.Pending, capped)
	}
	callTool(t, srv.URL, gen.ToolGetSources, map[string]any{"slug": slug}, &got)
	if len(got.Sources) != 3 {
		t.Errorf("get_sources after the flood: %+v", got)
	}
	if data, _ := json.Marshal(list.Proposals); len(list.Proposals) != 20 {
		t.Errorf("list_proposals shows %d pending: %s", len(list.Proposals), data)
	}
}
