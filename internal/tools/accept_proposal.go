package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// AcceptProposal implements gen.ToolHandlers: curation.Node.Accept makes
// the change as the curator tools make theirs and records the decision
// once it is written; 3gs proposals accept calls the same function.
func (h *Handlers) AcceptProposal(ctx context.Context, in *gen.AcceptProposalInput) (*gen.AcceptProposalOutput, error) {
	out := &gen.AcceptProposalOutput{ID: in.ID, Status: gen.ProposalStatusPending}
	if h.props == nil || h.node == nil {
		return nil, editFailure(h.noProposals(), out)
	}
	who := auth.CallerFrom(ctx).Name
	if who == "" {
		who = store.Actor
	}
	done, err := h.node.Accept(who, in.ID, deref(in.Reason))
	var ae *curation.AcceptError
	if errors.As(err, &ae) && ae.Accepted != nil {
		acceptedOut(out, ae.Accepted)
	}
	var errs strictjson.Errors
	switch {
	case errors.Is(err, curation.ErrNoProposals):
		return nil, editFailure(h.noProposals(), out)
	case err == nil:
		acceptedOut(out, done)
		out.Status = gen.ProposalStatusAccepted
		return out, nil
	case ae == nil:
		return nil, err
	case ae.Step == curation.StepFind:
		return nil, editFailure(proposalError(in.ID, ae.Err), out)
	case ae.Step == curation.StepCheck:
		return nil, editFailure("Cannot tell whether the proposal was applied already: "+ae.Err.Error()+". It stays pending", out)
	case ae.Step == curation.StepApply && errors.As(ae.Err, &errs):
		return nil, editFailure("The proposal no longer applies to the registry, which changed since it was made: "+errs.Error()+". It stays pending; reject it, or make the change by hand", out)
	case ae.Step == curation.StepApply:
		return nil, editFailure("The proposal was not applied: "+storeProblem(ae.Err)+". It stays pending", out)
	case out.Changed:
		return nil, &gen.ToolError{Text: fmt.Sprintf("The change was applied (registry version %s, recorded in the audit log as %s), but recording the decision failed: %v. The proposal still reads pending; accept it again to record the decision: the audit log shows the change made, so it is not applied twice.", deref(out.RegistryVersion), proposals.Actor(in.ID, who), ae.Err), Structured: out}
	}
	return nil, editFailure("Cannot record the decision: "+ae.Err.Error(), out)
}

// acceptedOut fills out with what an accept did.
func acceptedOut(out *gen.AcceptProposalOutput, a *curation.Accepted) {
	if a.Changed {
		out.Changed, out.RegistryVersion, out.Signed = true, ptr(a.Version), ptr(a.Signed)
	}
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
