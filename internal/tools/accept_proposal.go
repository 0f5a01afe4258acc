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
		if err := h.applyProposal(p, who, out); err != nil {
			return nil, err
		}
		dec.Version = deref(out.RegistryVersion)
	}
	if _, err := d.store.Decide(p.ID, proposals.Accepted, dec); err != nil {
		if out.Changed {
			return nil, &gen.ToolError{Text: fmt.Sprintf("The change was applied (registry version %s, recorded in the audit log as %s), but recording the decision failed: %v. The proposal still reads pending; accept it again to record the decision: the audit log shows the change made, so it is not applied twice.", dec.Version, proposals.Actor(p.ID, who), err), Structured: out}
		}
		return nil, editFailure("Cannot record the decision: "+err.Error(), out)
	}
	out.Status = gen.AcceptProposalOutputStatusAccepted
	return out, nil
}

// applyProposal makes p's change, accepted by who, and fills out with
// the result. A change the audit log shows made already (a crash, or a
// failed write of the proposals file, after the change and before the
// decision) is not made again: out names the version it made.
func (h *Handlers) applyProposal(p *proposals.Proposal, who string, out *gen.AcceptProposalOutput) error {
	version, done, err := proposals.AppliedIn(h.edit.AuditLog, p.ID)
	if err != nil {
		return editFailure("Cannot tell whether the proposal was applied already: "+err.Error()+". It stays pending", out)
	}
	if done {
		out.Changed, out.RegistryVersion, out.Signed = true, ptr(version), ptr(h.cur.Load().signature.Verified)
		return nil
	}
	next, err := h.changeAs(proposals.Actor(p.ID, who), p.AuditAction(), p.Slug, func(doc *gen.Registry) error { return proposals.ApplyAccepted(p, doc) })
	var errs strictjson.Errors
	switch {
	case errors.As(err, &errs):
		return editFailure("The proposal no longer applies to the registry, which changed since it was made: "+errs.Error()+". It stays pending; reject it, or make the change by hand", out)
	case err != nil:
		return editFailure("The proposal was not applied: "+err.Error()+". It stays pending", out)
	}
	out.Changed, out.RegistryVersion, out.Signed = true, ptr(next.reg.Version()), ptr(next.signature.Verified)
	return nil
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
