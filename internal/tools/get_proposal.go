package tools

import (
	"context"
	"strings"

	"github.com/three-good-sources/3gs/gen"
)

// GetProposal implements gen.ToolHandlers.
func (h *Handlers) GetProposal(_ context.Context, in *gen.GetProposalInput) (*gen.GetProposalOutput, error) {
	out := &gen.GetProposalOutput{ID: in.ID}
	if pk := h.cur.Load().reg.Curator().Pubkey; pk != "" {
		out.NodePubkey = ptr(pk)
	}
	d := h.props
	if d == nil {
		return nil, &gen.ToolError{Text: h.noProposals(), Structured: out}
	}
	p, err := d.store.Get(in.ID)
	if err != nil {
		return nil, &gen.ToolError{Text: proposalError(in.ID, err), Structured: out}
	}
	out.Proposal = proposalOut(h.counted(p))
	return out, nil
}

// GetProposalText implements gen.ToolHandlers.
func (h *Handlers) GetProposalText(out *gen.GetProposalOutput) string {
	var b strings.Builder
	writeProposal(&b, out.Proposal)
	writeVerdict(&b, out.Proposal)
	if out.NodePubkey != nil && out.Proposal.Status == gen.ProposalStatusPending {
		b.WriteString("Endorsed curators vote with 3gs proposals vote " + out.ID + " support|oppose --key-file KEY --node URL; this node's key is " + *out.NodePubkey + ".\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
