package cli

import (
	"github.com/three-good-sources/3gs/gen"

	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/proposals"
)

// 3gs proposals reject decides in bulk: by client, then every pending
// one; two ways of choosing at once is a usage error.
func TestProposalsRejectInBulk(t *testing.T) {
	_, _, _, regPath := curatorSetup(t)
	from := func(client string) string {
		return proposed(t, regPath, gen.ProposalRecord{Action: gen.ProposalActionReportDeadSource, Slug: "any", Rank: ptr(1), Reason: "gone", Client: proposals.Optional(client)})
	}
	v6 := from("2001:db8:1:2::/64")
	a := from("192.0.2.1")
	b := from("")

	if code, _, errOut := run(t, nil, "proposals", "reject", "--all-pending", "--client", "192.0.2.1", "--registry", regPath, "--reason", "x"); code != ExitUsage || !strings.Contains(errOut, "one way") {
		t.Errorf("two ways of choosing: exit %d, %s", code, errOut)
	}
	code, out, errOut := run(t, nil, "proposals", "reject", "--client", "2001:db8:1:2::9", "--registry", regPath, "--reason", "one sender's flood")
	if code != ExitOK || !strings.Contains(out, "Rejected proposal "+v6) {
		t.Fatalf("--client an address of the /64: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, nil, "proposals", "reject", "--all-pending", "--registry", regPath, "--reason", "a flood")
	if code != ExitOK || !strings.Contains(out, "Rejected 2 proposals") || !strings.Contains(out, a) || !strings.Contains(out, b) {
		t.Fatalf("--all-pending: exit %d\n%s%s", code, out, errOut)
	}
	if _, out, _ = run(t, nil, "proposals", "reject", "--older-than", "3d", "--registry", regPath, "--reason", "x"); !strings.Contains(out, "nothing was rejected") {
		t.Errorf("with none pending: %s", out)
	}
}
