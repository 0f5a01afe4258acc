package proposals

import (
	"time"

	"github.com/three-good-sources/3gs/gen"
)

// A line of the file is schema/proposal.schema.json (gen.ProposalRecord),
// decoded strictly (exact keys, every bound, times parsed) and turned into
// a Proposal.

// stamp is how the file holds a time: in UTC, which the encoder writes as
// RFC 3339 to the nanosecond.
func stamp(t time.Time) time.Time { return t.UTC() }

// record is p as a line of the file.
func record(p *Proposal) *gen.ProposalRecord {
	r := &gen.ProposalRecord{ID: p.ID, Created: stamp(p.Created), Action: p.Action, Slug: p.Slug,
		Category: p.Category, Source: p.Source, Reason: p.Reason, Status: p.Status}
	if p.Rank != 0 {
		rank := p.Rank
		r.Rank = &rank
	}
	if p.Contact != "" {
		contact := p.Contact
		r.Contact = &contact
	}
	if p.Client != "" {
		client := p.Client
		r.Client = &client
	}
	if p.Digest != "" {
		digest := p.Digest
		r.Digest = &digest
	}
	for _, v := range p.Votes {
		r.Votes = append(r.Votes, gen.ProposalVote{Pubkey: v.Pubkey, Vote: v.Vote, Time: stamp(v.Time), Signature: v.Signature})
	}
	if d := p.Decision; d != nil {
		r.Decision = &gen.ProposalDecision{Time: stamp(d.Time), Actor: d.Actor}
		if d.Reason != "" {
			r.Decision.Reason = &d.Reason
		}
		if d.Version != "" {
			r.Decision.Version = &d.Version
		}
	}
	return r
}

// fromRecord is the Proposal a line of the file holds.
func fromRecord(r *gen.ProposalRecord) *Proposal {
	p := &Proposal{ID: r.ID, Created: r.Created, Action: r.Action, Slug: r.Slug, Category: r.Category, Source: r.Source, Reason: r.Reason, Status: r.Status}
	if r.Rank != nil {
		p.Rank = *r.Rank
	}
	if r.Contact != nil {
		p.Contact = *r.Contact
	}
	if r.Client != nil {
		p.Client = *r.Client
	}
	if r.Digest != nil {
		p.Digest = *r.Digest
	}
	for _, v := range r.Votes {
		p.Votes = append(p.Votes, Vote{Pubkey: v.Pubkey, Vote: v.Vote, Time: v.Time, Signature: v.Signature})
	}
	if d := r.Decision; d != nil {
		p.Decision = &Decision{Time: d.Time, Actor: d.Actor}
		if d.Reason != nil {
			p.Decision.Reason = *d.Reason
		}
		if d.Version != nil {
			p.Decision.Version = *d.Version
		}
	}
	return p
}
