package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// ProposeChange implements gen.ToolHandlers.
func (h *Handlers) ProposeChange(ctx context.Context, in *gen.ProposeChangeInput) (*gen.ProposeChangeOutput, error) {
	out := &gen.ProposeChangeOutput{Action: in.Action, Slug: in.Slug}
	refuse := func(text string) error {
		return &gen.ToolError{Text: text + " Nothing was recorded.", Structured: out}
	}
	d := h.props
	if d == nil {
		return nil, refuse(h.noProposals())
	}
	p := proposals.Proposal{ProposalRecord: gen.ProposalRecord{Action: in.Action, Slug: in.Slug, Category: in.Category, Rank: in.Rank, Source: in.Source, Reason: in.Reason, Contact: in.Contact}}
	if path, reason := proposals.Shape(&p); path != "" {
		return nil, strictjson.Errors{{Path: path, Reason: reason}}
	}
	// The cheap bounds first, so a flood costs no registry check.
	if n := d.store.Pending(); n >= d.store.MaxPending() {
		return nil, refuse(fullText(n))
	}
	// The allowance is reserved here and given back unless the proposal
	// is recorded: only recorded proposals are charged, so a flood of
	// invalid ones costs no one else's allowance. An invalid one is
	// charged to the sender's own, larger allowance of invalid proposals
	// instead, reserved before the check it costs and given back when
	// the proposal is valid.
	c := auth.ClientFrom(ctx)
	client := proposals.Client{Addr: c.Addr, Session: c.Session}
	now := h.now()
	charge, refused := d.rate.Take(now, client)
	if refused != nil {
		return nil, refuse(rateRefusal(refused))
	}
	checked, refused := d.rate.Invalid.Take(now, client)
	if refused != nil {
		charge.Refund()
		return nil, refuse(rateRefusal(refused))
	}
	if err := h.checkProposal(&p); err != nil {
		charge.Refund()
		return nil, err
	}
	checked.Refund()
	p.Client = proposals.Optional(d.rate.ClientOf(client))
	rec, err := d.store.Add(p.ProposalRecord)
	if err != nil {
		charge.Refund()
	}
	switch {
	case errors.Is(err, proposals.ErrFull):
		return nil, refuse(fullText(d.store.MaxPending()))
	case errors.Is(err, proposals.ErrCapped):
		size, max := d.store.Size()
		return nil, refuse(fmt.Sprintf("The proposals file is full (%d of its %d bytes, --max-proposals-bytes) with proposals waiting for the curator; propose again once some are decided.", size, max))
	}
	if err != nil {
		return nil, err
	}
	out.Recorded, out.ID, out.Status = true, ptr(rec.ID), ptr(gen.ProposeChangeOutputStatusPending)
	return out, nil
}

func fullText(n int) string {
	return fmt.Sprintf("The curator has %d proposals waiting, the most this server keeps (--max-pending-proposals); propose again once some are decided.", n)
}

// checkProposal checks that p, accepted now, would apply to the registry
// served (curation.CheckProposal): its problems are argument problems.
func (h *Handlers) checkProposal(p *proposals.Proposal) error {
	limit := int64(registry.MaxSize)
	if h.node != nil {
		limit = h.node.Limit()
	}
	return curation.CheckProposal(h.cur.Load().reg, p, limit)
}

// ProposeChangeText implements gen.ToolHandlers.
func (h *Handlers) ProposeChangeText(out *gen.ProposeChangeOutput) string {
	return fmt.Sprintf("Proposal %s recorded (%s %s), pending: the curator accepts or rejects it, which may take days; until then nothing changes and get_sources answers as before. Give the user the id; anyone can follow it with get_proposal {\"id\": %q}.", deref(out.ID), out.Action, out.Slug, deref(out.ID))
}
