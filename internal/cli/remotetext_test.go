package cli

import (
	"github.com/three-good-sources/3gs/gen"

	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/registry"
)

// A proposer's words reach the curator's terminal with their control and
// format characters shown as escapes, in list and in show.
func TestProposalTextShownEscaped(t *testing.T) {
	_, _, _, regPath := curatorSetup(t)
	reg, _ := registry.LoadFile(regPath)
	id := proposed(t, regPath, gen.ProposalRecord{Action: gen.ProposalActionReportDeadSource, Slug: reg.Categories()[0].Slug, Rank: ptr(1),
		Reason: "gone \x1b[2J\x1b]0;owned\x07 \u202eevil", Contact: ptr("me\u200b@example.com")})
	for _, verb := range [][]string{{"list"}, {"show", id}} {
		code, out, errOut := run(t, nil, append(append([]string{"proposals"}, verb...), "--registry", regPath)...)
		if code != ExitOK {
			t.Fatalf("proposals %s: exit %d\n%s", verb[0], code, errOut)
		}
		if strings.ContainsAny(out, "\x1b\x07\u202e\u200b") {
			t.Errorf("proposals %s: a control or format character reached the terminal:\n%q", verb[0], out)
		}
		if !strings.Contains(out, `gone \x1b[2J\x1b]0;owned\x07 \u202eevil`) {
			t.Errorf("proposals %s: the reason is not shown with its escapes:\n%q", verb[0], out)
		}
	}
	if _, out, _ := run(t, nil, "proposals", "show", id, "--registry", regPath); !strings.Contains(out, `me\u200b@example.com`) {
		t.Errorf("proposals show: the contact is not shown with its escapes:\n%q", out)
	}
}
