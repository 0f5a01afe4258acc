package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// A curator's everyday acts on a running node, with real processes on
// loopback: 3gs serve --key-file holds the registry, and the CLI accepts
// and rejects proposals, endorses a curator and adds a category through
// it (its admin tools, over the local channel beside the registry). The
// server serves each change at once, the signature verifies, and the
// audit log says what each act was. Before, accept said "decide through
// it: call accept_proposal with an admin token" and endorse said "Stop
// that server"; no command could add a category.
func TestCuratorActsOnARunningNode(t *testing.T) {
	bin := testkit.Binary(t)
	reg, key := proposalNode(t, bin, "")
	srv := testkit.Serve(t, bin, "--registry", reg, "--key-file", key)

	var proposed gen.ProposeChangeOutput
	callTool(t, srv.URL, gen.ToolProposeChange, sqliteProposal(), &proposed)
	var cats gen.ListCategoriesOutput
	callTool(t, srv.URL, gen.ToolListCategories, map[string]any{}, &cats)
	var dead gen.ProposeChangeOutput
	callTool(t, srv.URL, gen.ToolProposeChange, map[string]any{"action": "report_dead_source", "slug": cats.Categories[0].Slug, "rank": 1, "reason": "It answers 404."}, &dead)
	if proposed.ID == nil || dead.ID == nil {
		t.Fatalf("propose_change: %+v %+v", proposed, dead)
	}
	accept, reject := *proposed.ID, *dead.ID

	if code, out := run3gs(t, bin, "proposals", "accept", accept, "--registry", reg, "--reason", "welcome"); code != 0 || !strings.Contains(out, "Accepted proposal "+accept) {
		t.Fatalf("accept on the running node: exit %d\n%s", code, out)
	}
	if code, out := run3gs(t, bin, "proposals", "reject", reject, "--registry", reg, "--reason", "it answers"); code != 0 || !strings.Contains(out, "Rejected proposal "+reject) {
		t.Fatalf("reject on the running node: exit %d\n%s", code, out)
	}
	pk := regexp.MustCompile(`pk:[a-z0-9]{52}`).FindString(runOK(t, bin, "keygen", "--out", filepath.Join(t.TempDir(), "other.key")))
	if code, out := run3gs(t, bin, "endorse", reg, "--pubkey", pk, "--url", "https://coffee.example", "--name", "Coffee"); code != 0 || !strings.Contains(out, "Endorsed Coffee") {
		t.Fatalf("endorse on the running node: exit %d\n%s", code, out)
	}
	category := sqliteProposal()["category"].(map[string]any)
	category["name"] = "Learning SQLite, the command line"
	data, _ := json.Marshal(category)
	file := filepath.Join(t.TempDir(), "category.json")
	os.WriteFile(file, data, 0o644)
	if code, out := run3gs(t, bin, "category", "add", "sqlite-cli", "--registry", reg, "--file", file); code != 0 || !strings.Contains(out, "Added category sqlite-cli") {
		t.Fatalf("category add on the running node: exit %d\n%s", code, out)
	}

	// Served at once, without a restart.
	for _, slug := range []string{"sqlite-learning", "sqlite-cli"} {
		var got gen.GetSourcesOutput
		callTool(t, srv.URL, gen.ToolGetSources, map[string]any{"slug": slug}, &got)
		if len(got.Sources) != 3 {
			t.Errorf("get_sources %s: %+v", slug, got)
		}
	}
	var ends gen.GetEndorsementsOutput
	callTool(t, srv.URL, gen.ToolGetEndorsements, map[string]any{}, &ends)
	if !strings.Contains(mustJSON(t, ends), pk) {
		t.Errorf("get_endorsements does not list %s: %+v", pk, ends)
	}
	var shown gen.GetProposalOutput
	callTool(t, srv.URL, gen.ToolGetProposal, map[string]any{"id": reject}, &shown)
	if p := shown.Proposal; p == nil || p.Status != gen.ProposalStatusRejected {
		t.Errorf("get_proposal %s: %+v", reject, shown.Proposal)
	}

	if out := runOK(t, bin, "verify", reg); !strings.HasPrefix(out, "OK") {
		t.Errorf("verify: %s", out)
	}
	runOK(t, bin, "audit", "verify", reg)
	log := runOK(t, bin, "audit", "log", reg)
	for _, want := range []string{
		"accept proposal " + accept + ": welcome",
		"endorse add " + pk + " https://coffee.example",
		"add category sqlite-cli",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the audit log does not say %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, " reload ") || strings.Contains(log, " sign ") {
		t.Errorf("an act recorded as a reload or a sign:\n%s", log)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
