package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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
	out := &gen.AcceptProposalOutput{ID: in.ID, Status: gen.ProposalStatusPending}
	d := h.props
	if d == nil {
		return nil, editFailure(h.noProposals(), out)
	}
	d.decide.Lock()
	defer d.decide.Unlock()
	p, err := d.store.Get(in.ID)
	if err == nil && p.Status != gen.ProposalStatusPending {
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
	if _, err := d.store.Decide(p.ID, gen.ProposalStatusAccepted, dec); err != nil {
		if out.Changed {
			return nil, &gen.ToolError{Text: fmt.Sprintf("The change was applied (registry version %s, recorded in the audit log as %s), but recording the decision failed: %v. The proposal still reads pending; accept it again to record the decision: the audit log shows the change made, so it is not applied twice.", dec.Version, proposals.Actor(p.ID, who), err), Structured: out}
		}
		return nil, editFailure("Cannot record the decision: "+err.Error(), out)
	}
	out.Status = gen.ProposalStatusAccepted
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

// RejectProposal implements gen.ToolHandlers: one proposal by id, or
// many by a list or a filter, through the store's one bulk decision.
func (h *Handlers) RejectProposal(ctx context.Context, in *gen.RejectProposalInput) (*gen.RejectProposalOutput, error) {
	out := &gen.RejectProposalOutput{ID: deref(in.ID), Status: gen.ProposalStatusPending, Rejected: []string{}}
	d := h.props
	if d == nil {
		return nil, editFailure(h.noProposals(), out)
	}
	sel, err := rejectSelection(in, h.now())
	if err != nil {
		return nil, err
	}
	d.decide.Lock()
	defer d.decide.Unlock()
	who := auth.CallerFrom(ctx).Name
	if who == "" {
		who = store.Actor
	}
	ids, err := d.store.Reject(sel, proposals.Decision{Actor: who, Reason: in.Reason})
	if err != nil && in.ID != nil {
		return nil, editFailure(proposalError(*in.ID, err), out)
	}
	if err != nil {
		return nil, editFailure("Cannot reject them: "+err.Error()+". list_proposals shows the pending ones.", out)
	}
	out.Rejected, out.Count = append(out.Rejected, ids...), len(ids)
	if len(ids) > 0 {
		out.Status = gen.ProposalStatusRejected
	}
	return out, nil
}

// rejectSelection is the proposals in chooses, at now; a filter that
// cannot be read is an argument problem.
func rejectSelection(in *gen.RejectProposalInput, now time.Time) (proposals.Selection, error) {
	var sel proposals.Selection
	var err error
	switch {
	case in.ID != nil:
		sel.IDs = []string{*in.ID}
	case len(in.Ids) > 0:
		sel.IDs = in.Ids
	case in.AllPending != nil:
		if !*in.AllPending {
			return sel, strictjson.Errors{{Path: "all_pending", Reason: "false chooses nothing: give true, or another of id, ids, older_than, from_client"}}
		}
		sel.AllPending = true
	case in.OlderThan != nil:
		if sel.OlderThan, err = proposals.ParseOlderThan(*in.OlderThan, now); err != nil {
			return sel, strictjson.Errors{{Path: "older_than", Reason: err.Error()}}
		}
	case in.FromClient != nil:
		if sel.FromClient, err = proposals.ParseClient(*in.FromClient); err != nil {
			return sel, strictjson.Errors{{Path: "from_client", Reason: err.Error()}}
		}
	}
	return sel, nil
}

// RejectProposalText implements gen.ToolHandlers.
func (h *Handlers) RejectProposalText(out *gen.RejectProposalOutput) string {
	if out.ID != "" && out.Count == 1 {
		return "Rejected proposal " + out.ID + "; the registry is unchanged. get_proposal shows the reason to anyone who asks."
	}
	if out.Count == 0 {
		return "No pending proposal matched; nothing was rejected."
	}
	shown := out.Rejected
	more := ""
	if len(shown) > 20 {
		shown, more = shown[:20], fmt.Sprintf(" and %d more", len(out.Rejected)-20)
	}
	return fmt.Sprintf("Rejected %d proposals (%s%s); the registry is unchanged, and their bodies are dropped from the proposals file. get_proposal shows the reason to anyone who asks.", out.Count, strings.Join(shown, ", "), more)
}
