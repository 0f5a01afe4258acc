package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/proposals"
)

// ListProposals implements gen.ToolHandlers.
func (h *Handlers) ListProposals(_ context.Context, in *gen.ListProposalsInput) (*gen.ListProposalsOutput, error) {
	out := &gen.ListProposalsOutput{Proposals: []gen.ProposalSummary{}}
	d := h.props
	if d == nil {
		return nil, &gen.ToolError{Text: h.noProposals(), Structured: out}
	}
	f := proposals.Filter{Status: deref(in.Status), Slug: deref(in.Slug), After: deref(in.Cursor), Limit: deref(in.Limit)}
	if f.After != "" {
		if _, err := d.store.Get(f.After); err != nil {
			// The page would start over: a client paging would go round.
			return nil, &gen.ToolError{Text: "The cursor names a proposal this server no longer keeps (decided proposals are dropped after the retention time), so the page it ended cannot be continued. Call list_proposals without a cursor to start again.", Structured: out}
		}
	}
	page, more := d.store.List(f)
	for _, p := range page {
		out.Proposals = append(out.Proposals, summaryOut(h.counted(p)))
	}
	if more && len(page) > 0 {
		out.NextCursor = ptr(page[len(page)-1].ID)
	}
	out.Pending = d.store.Pending()
	return out, nil
}

// ListProposalsText implements gen.ToolHandlers: each proposal's reason is
// an unknown party's words, framed as such.
func (h *Handlers) ListProposalsText(out *gen.ListProposalsOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d proposals wait for the curator.", out.Pending)
	if len(out.Proposals) == 0 {
		b.WriteString(" None matches.")
		return b.String()
	}
	b.WriteString("\n")
	for _, p := range out.Proposals {
		b.WriteString(proposalOpen + "\n")
		fmt.Fprintf(&b, "Proposal: %s (%s %s), %s, proposed %s, votes %d for, %d against\n", p.ID, p.Action, p.Slug, p.Status, timeText(&p.Created), p.Support, p.Oppose)
		b.WriteString("Reason: " + theirs(p.Reason, 1000) + "\n")
		b.WriteString(proposalClose + "\n")
	}
	if out.NextCursor != nil {
		fmt.Fprintf(&b, "More follow: call list_proposals with cursor %q (and the same filters).\n", *out.NextCursor)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
