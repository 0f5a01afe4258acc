package mcp_test

import (
	"context"
	"slices"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/testserver"
)

// Tools by role (issue 48): an anonymous caller is listed the four seed
// tools, get_federated_sources only on a node with peers, the community
// tools only on a node that takes proposals, and never a tool that needs a
// token; get_audit_log and get_identity are listed to token holders. The
// names are written out here, not derived from the rule under test; a tool
// added since (CONTRIBUTING.md's walkthrough adds one) is left out of the
// comparison.
func TestListingByRole(t *testing.T) {
	seed := []string{"get_endorsements", "get_provenance", "get_sources", "list_categories"}
	community := []string{"get_proposal", "list_proposals", "propose_change", "vote_proposal"}
	userOnly := []string{"explain_match", "get_audit_log", "get_identity"}
	adminOnly := []string{"accept_proposal", "endorse_curator", "reject_proposal", "reload_registry", "remove_category", "upsert_category"}
	sorted := func(parts ...[]string) []string {
		out := slices.Concat(parts...)
		slices.Sort(out)
		return out
	}
	fed := []string{"get_federated_sources"}
	known := sorted(seed, community, userOnly, adminOnly, fed)
	ofKnown := func(names []string) []string {
		return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !slices.Contains(known, n) })
	}
	for _, c := range []struct {
		name                string
		cfg                 mcp.Config
		public, user, admin []string
	}{
		{"plain", mcp.Config{}, seed, sorted(seed, userOnly), sorted(seed, userOnly, adminOnly)},
		{"peers", mcp.Config{Federated: true}, sorted(seed, fed), sorted(seed, fed, userOnly), sorted(seed, fed, userOnly, adminOnly)},
		{"proposals", mcp.Config{Proposals: true}, sorted(seed, community), sorted(seed, community, userOnly), sorted(seed, community, userOnly, adminOnly)},
		{"both", mcp.Config{Federated: true, Proposals: true}, sorted(seed, fed, community), sorted(seed, fed, community, userOnly), sorted(seed, fed, community, userOnly, adminOnly)},
	} {
		for tier, want := range [][]string{c.public, c.user, c.admin} {
			if got := ofKnown(mcp.ListedFor(gen.Tier(tier), c.cfg)); !slices.Equal(got, want) {
				t.Errorf("%s, %s: listed %v, want %v", c.name, gen.Tier(tier), got, want)
			}
		}
		// What a session is answered is the same list.
		srv := testserver.New(t, testserver.Options{Stub: true, Federated: c.cfg.Federated, Proposals: c.cfg.Proposals}).Server
		sess := srv.NewSession()
		call(t, sess, context.Background(), "initialize", `"protocolVersion":"2025-11-25"`)
		res, e := call(t, sess, context.Background(), "tools/list", "")
		if e != nil {
			t.Fatal(e)
		}
		if got := ofKnown(toolNames(res)); !slices.Equal(got, c.public) {
			t.Errorf("%s: an anonymous session is listed %v, want %v", c.name, got, c.public)
		}
	}
}
