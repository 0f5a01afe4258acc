package e2e

import (
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// Against the running server: invalid proposals (a category the registry
// does not have) are refused as invalid and charge nothing, so the
// client's valid proposals are all recorded up to --proposal-rate, and
// the refusal after them counts what was recorded.
func TestInvalidProposalsChargeNoAllowance(t *testing.T) {
	bin := testkit.Binary(t)
	reg, key := proposalNode(t, bin, "")
	srv := testkit.Serve(t, bin, "--registry", reg, "--key-file", key, "--proposal-rate", "2")
	var cats gen.ListCategoriesOutput
	callTool(t, srv.URL, gen.ToolListCategories, map[string]any{}, &cats)
	valid := map[string]any{"action": "report_dead_source", "slug": cats.Categories[0].Slug, "rank": 1, "reason": "It answers 404."}
	invalid := map[string]any{"action": "report_dead_source", "slug": "no-such-category", "rank": 1, "reason": "It answers 404."}

	for range 3 {
		_, body := testkit.PostMCP(t, srv.URL, "tools/call", map[string]any{"name": gen.ToolProposeChange, "arguments": invalid})
		if strings.Contains(string(body), "recorded\":true") || !strings.Contains(string(body), "no-such-category") {
			t.Fatalf("an invalid proposal was not refused as invalid: %s", body)
		}
	}
	for i := range 2 {
		if a := testkit.CallTool(t, srv.URL, gen.ToolProposeChange, valid); a.IsError {
			t.Fatalf("valid proposal %d after 3 invalid ones, with --proposal-rate 2: %s", i+1, a.Text)
		}
	}
	a := testkit.CallTool(t, srv.URL, gen.ToolProposeChange, valid)
	if !a.IsError || !strings.Contains(a.Text, "(address 127.0.0.1) has recorded 2 proposals in the last hour") {
		t.Errorf("the third valid proposal: %s; want refused, counting the 2 recorded", a.Text)
	}
}
