package tools

import (
	"context"
	"fmt"
	"slices"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/proposals"
)

// VoteProposal implements gen.ToolHandlers. A vote counts only from a
// curator the registry served endorses, and only while that registry's
// own signature verifies: an unsigned or tampered file cannot say whose
// votes count.
func (h *Handlers) VoteProposal(_ context.Context, in *gen.VoteProposalInput) (*gen.VoteProposalOutput, error) {
	out := &gen.VoteProposalOutput{ID: in.ID, Vote: in.Vote, Voter: in.Voter}
	refuse := func(text string) error {
		return &gen.ToolError{Text: "The vote was not recorded: " + text, Structured: out}
	}
	d := h.props
	if d == nil {
		return nil, refuse(h.noProposals())
	}
	s := h.cur.Load()
	node := s.reg.Curator().Pubkey
	if node == "" || !s.signature.Verified {
		return nil, refuse("this node's registry is not signed by its curator, so it endorses no one whose votes could count.")
	}
	pub, err := curatorkey.ParsePublicKey(in.Voter)
	if err != nil {
		return nil, refuse("the voter's key: " + err.Error())
	}
	voter := curatorkey.URI(pub)
	if !h.endorses(voter) {
		return nil, refuse(fmt.Sprintf("%s is not a curator this node's signed registry endorses (get_endorsements lists them); only they may vote.", voter))
	}
	v := proposals.Vote{Pubkey: voter, Vote: in.Vote, Time: in.Time.UTC(), Signature: in.Signature}
	if err := proposals.VerifyVote(node, in.ID, v, h.now()); err != nil {
		return nil, refuse(err.Error() + ".")
	}
	p, err := d.store.AddVote(in.ID, v)
	if err != nil {
		return nil, refuse(proposalError(in.ID, err))
	}
	support, oppose := h.counted(p).Tally()
	out.Recorded, out.Voter, out.Support, out.Oppose = true, voter, ptr(support), ptr(oppose)
	return out, nil
}

// endorses reports whether the registry served endorses the key pk
// (canonical pk:… form).
func (h *Handlers) endorses(pk string) bool { return endorsedIn(h.cur.Load())[pk] }

// endorsedIn is the set of keys (canonical pk:… form) whose votes count
// on s: those its registry endorses, while its own signature verifies.
func endorsedIn(s *snapshot) map[string]bool {
	set := map[string]bool{}
	if !s.signature.Verified {
		return set
	}
	for _, e := range s.reg.Endorsements() {
		if k, err := curatorkey.ParsePublicKey(e.Pubkey); err == nil {
			set[curatorkey.URI(k)] = true
		}
	}
	return set
}

// counted is p (a copy the caller owns) with only the votes that count
// now: a curator whose endorsement was withdrawn since they voted, or a
// registry no longer signed, counts no more, as a new vote would not.
func (h *Handlers) counted(p *proposals.Proposal) *proposals.Proposal {
	set := endorsedIn(h.cur.Load())
	p.Votes = slices.DeleteFunc(p.Votes, func(v proposals.Vote) bool { return !set[v.Pubkey] })
	return p
}

// VoteProposalText implements gen.ToolHandlers.
func (h *Handlers) VoteProposalText(out *gen.VoteProposalOutput) string {
	return fmt.Sprintf("Recorded %s's vote (%s) on proposal %s: now %d for, %d against. Votes inform; the curator decides.", out.Voter, out.Vote, out.ID, deref(out.Support), deref(out.Oppose))
}
