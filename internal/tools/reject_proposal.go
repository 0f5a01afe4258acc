package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// RejectProposal implements gen.ToolHandlers: one proposal by id, or
// many by a list or a filter, through curation.Node.Reject, as 3gs
// proposals reject.
func (h *Handlers) RejectProposal(ctx context.Context, in *gen.RejectProposalInput) (*gen.RejectProposalOutput, error) {
	out := &gen.RejectProposalOutput{ID: deref(in.ID), Status: gen.ProposalStatusPending, Rejected: []string{}}
	if h.props == nil || h.node == nil {
		return nil, editFailure(h.noProposals(), out)
	}
	sel, err := rejectSelection(in, h.now())
	if err != nil {
		return nil, err
	}
	who := auth.CallerFrom(ctx).Name
	if who == "" {
		who = store.Actor
	}
	ids, err := h.node.Reject(who, sel, in.Reason)
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
