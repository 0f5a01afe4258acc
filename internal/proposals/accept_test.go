package proposals

import (
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
)

// A proposal recorded before propose_change knew a spelling of a private
// host (an older 3gs) is checked again when accepted: it is refused, the
// registry document untouched; one naming public hosts applies.
func TestAcceptingChecksTheHostsAgain(t *testing.T) {
	doc := func() *gen.Registry {
		return &gen.Registry{Categories: map[string]gen.Category{"topic": {Name: "Topic", Sources: []gen.Source{
			{Rank: 1, URL: "https://one.example/"}, {Rank: 2, URL: "https://two.example/"}, {Rank: 3, URL: "https://three.example/"},
		}}}}
	}
	for _, u := range []string{"http://[64:ff9b::7f00:1]/", "http://100.64.0.1/", "http://127.0.0.\uff11/", "http://intranet/"} {
		d := doc()
		p := &Proposal{ProposalRecord: gen.ProposalRecord{Action: gen.ProposalActionReplaceSource, Slug: "topic", Rank: ptr(2), Source: &gen.Source{Rank: 2, URL: u}}}
		err := ApplyAccepted(p, d)
		if err == nil || !strings.Contains(err.Error(), "may not name such a host") {
			t.Errorf("accepting a source at %s: %v, want refused", u, err)
		}
		if got := d.Categories["topic"].Sources[1].URL; got != "https://two.example/" {
			t.Errorf("accepting a source at %s changed the document: source 2 is %s", u, got)
		}
	}
	d := doc()
	if err := ApplyAccepted(&Proposal{ProposalRecord: gen.ProposalRecord{Action: gen.ProposalActionReplaceSource, Slug: "topic", Rank: ptr(2), Source: &gen.Source{Rank: 2, URL: "https://new.example/"}}}, d); err != nil || d.Categories["topic"].Sources[1].URL != "https://new.example/" {
		t.Errorf("accepting a public source: %v, source 2 %s", err, d.Categories["topic"].Sources[1].URL)
	}
}
