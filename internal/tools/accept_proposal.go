package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// AcceptProposal implements gen.ToolHandlers: the change is made as the
// curator tools make theirs (Handlers.change, through internal/store),
// and only once it is written is the decision recorded.
func (h *Handlers) AcceptProposal(ctx context.Context, in *gen.AcceptProposalInput) (*gen.AcceptProposalOutput, error) {
	out := &gen.AcceptProposalOutput{ID: in.ID, Status: gen.AcceptProposalOutputStatusPending}
	d := h.props
	if d == nil {
		return nil, editFailure(h.noProposals(), out)
	}
	d.decide.Lock()
	defer d.decide.Unlock()
	p, err := d.store.Get(in.ID)
	if err == nil && p.Status != proposals.Pending {
		err = proposals.ErrDecided
	}
	if err != nil {
		return nil, editFailure(proposalError(in.ID, err), out)
	}
	who := auth.CallerFrom(ctx).Name
	if who == "" {
		who = store.Actor
	}
	dec := proposals.Decision{Actor: who, Reason: deref(in.Reason)}
	if p.Changes() {
		next, err := h.changeAs(proposals.Actor(p.ID, who), p.AuditAction(), p.Slug, func(doc *gen.Registry) error { return proposals.Apply(p, doc) })
		var errs strictjson.Errors
		switch {
		case errors.As(err, &errs):
			return nil, editFailure("The proposal no longer applies to the registry, which changed since it was made: "+errs.Error()+". It stays pending; reject it, or make the change by hand", out)
		case err != nil:
			return nil, editFailure("The proposal was not applied: "+err.Error()+". It stays pending", out)
		}
		dec.Version = next.reg.Version()
		out.Changed, out.RegistryVersion, out.Signed = true, ptr(dec.Version), ptr(next.signature.Verified)
	}
	if _, err := d.store.Decide(p.ID, proposals.Accepted, dec); err != nil {
		if out.Changed {
			return nil, &gen.ToolError{Text: fmt.Sprintf("The change was applied (registry version %s, recorded in the audit log as %s), but recording the decision failed: %v. The proposal still reads pending; reject it with a reason saying it was applied.", dec.Version, proposals.Actor(p.ID, who), err), Structured: out}
		}
		return nil, editFailure("Cannot record the decision: "+err.Error(), out)
	}
	out.Status = gen.AcceptProposalOutputStatusAccepted
	return out, nil
}

// AcceptProposalText implements gen.ToolHandlers.
func (h *Handlers) AcceptProposalText(out *gen.AcceptProposalOutput) string {
	if !out.Changed {
		return "Accepted proposal " + out.ID + ". It changes nothing by itself (a report of a dead source): replace the source with upsert_category."
	}
	signed := "not signed"
	if deref(out.Signed) {
		signed = "signed with the curator key"
	}
	return fmt.Sprintf("Accepted proposal %s and applied it: registry version %s, %s, served now; the audit log entry names the proposal.", out.ID, deref(out.RegistryVersion), signed)
}

// RejectProposal implements gen.ToolHandlers.
func (h *Handlers) RejectProposal(ctx context.Context, in *gen.RejectProposalInput) (*gen.RejectProposalOutput, error) {
	out := &gen.RejectProposalOutput{ID: in.ID, Status: gen.RejectProposalOutputStatusPending}
	d := h.props
	if d == nil {
		return nil, editFailure(h.noProposals(), out)
	}
	d.decide.Lock()
	defer d.decide.Unlock()
	who := auth.CallerFrom(ctx).Name
	if who == "" {
		who = store.Actor
	}
	if _, err := d.store.Decide(in.ID, proposals.Rejected, proposals.Decision{Actor: who, Reason: in.Reason}); err != nil {
		return nil, editFailure(proposalError(in.ID, err), out)
	}
	out.Status = gen.RejectProposalOutputStatusRejected
	return out, nil
}

// RejectProposalText implements gen.ToolHandlers.
func (h *Handlers) RejectProposalText(out *gen.RejectProposalOutput) string {
	return "Rejected proposal " + out.ID + "; the registry is unchanged. get_proposal shows the reason to anyone who asks."
}
