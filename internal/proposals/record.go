package proposals

import (
	"fmt"
	"time"

	"github.com/three-good-sources/3gs/gen"
)

// A line of the file is schema/proposal.schema.json (gen.ProposalRecord),
// decoded strictly (exact keys, every bound) and turned into a Proposal,
// whose times are parsed.

// stamp is how the file writes a time.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseTime(what, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %v", what, err)
	}
	return t, nil
}

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
func fromRecord(r *gen.ProposalRecord) (*Proposal, error) {
	p := &Proposal{ID: r.ID, Action: r.Action, Slug: r.Slug, Category: r.Category, Source: r.Source, Reason: r.Reason, Status: r.Status}
	var err error
	if p.Created, err = parseTime("created", r.Created); err != nil {
		return nil, err
	}
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
	for i, v := range r.Votes {
		t, err := parseTime(fmt.Sprintf("votes[%d].time", i), v.Time)
		if err != nil {
			return nil, err
		}
		p.Votes = append(p.Votes, Vote{Pubkey: v.Pubkey, Vote: v.Vote, Time: t, Signature: v.Signature})
	}
	if d := r.Decision; d != nil {
		t, err := parseTime("decision.time", d.Time)
		if err != nil {
			return nil, err
		}
		p.Decision = &Decision{Time: t, Actor: d.Actor}
		if d.Reason != nil {
			p.Decision.Reason = *d.Reason
		}
		if d.Version != nil {
			p.Decision.Version = *d.Version
		}
	}
	return p, nil
}
