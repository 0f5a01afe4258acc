package tools

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// A non-public host is refused in whatever spelling a resolver or
// browser reads it (fetch.CheckHost), and the refusal names the address
// it is: no proposal can get the node's own network past the check by
// writing 127.0.0.1 as 2130706433 or localhost with a trailing dot.
func TestProposalsRefuseEverySpellingOfAPrivateHost(t *testing.T) {
	h := proposalNode(t, newKey(t), curatorkey.Public(newKey(t)), proposals.Options{}, 100)
	for _, c := range []struct{ url, says string }{
		{"http://2130706433/", "127.0.0.1"},
		{"http://0x7f000001/", "127.0.0.1"},
		{"http://0177.0.0.1/", "127.0.0.1"},
		{"http://127.1/", "127.0.0.1"},
		{"http://0/", "0.0.0.0"},
		{"http://127.0.0.1./", "127.0.0.1"},
		{"http://localhost./", "localhost"},
		{"http://169.254.169.254./latest/", "169.254.169.254"},
		{"http://100.64.0.1/", "carrier-grade NAT"},
		{"http://[64:ff9b::7f00:1]/", "NAT64 form of 127.0.0.1"},
		{"http://[2002:7f00:1::]/", "6to4 form of 127.0.0.1"},
		{"http://intranet/", "intranet"},
		{"http://127.0.0.１:6379/", "127.0.0.1"},
		{"http://169.254.169.25%EF%BC%94/latest/meta-data/", "169.254.169.254"},
		{"http://10.0.0.①/", "10.0.0.1"},
	} {
		src := &gen.Source{Rank: 2, Name: "N", URL: c.url, Type: "tool", Why: "W"}
		_, err := h.ProposeChange(context.Background(), &gen.ProposeChangeInput{Action: "replace_source", Slug: "topic", Rank: ptr(2), Source: src, Reason: "r"})
		var errs strictjson.Errors
		if !errors.As(err, &errs) || errs[0].Path != "source.url" || !strings.Contains(errs[0].Reason, c.says) {
			t.Errorf("replace_source with %s: %v, want invalid params at source.url naming %q", c.url, err, c.says)
		}
	}
	if out, _ := h.ListProposals(context.Background(), &gen.ListProposalsInput{}); len(out.Proposals) != 0 {
		t.Errorf("%d proposals naming non-public hosts were recorded", len(out.Proposals))
	}
}
