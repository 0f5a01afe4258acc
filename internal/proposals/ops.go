package proposals

import (
	"github.com/three-good-sources/3gs/gen"

	"fmt"
	"time"
)

// Pending is how many proposals wait for the curator.
func (s *File) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending()
}

func (s *File) pending() int {
	n := 0
	for _, p := range s.items {
		if p.Status == gen.ProposalStatusPending {
			n++
		}
	}
	return n
}

// MaxPending is the bound Add keeps.
func (s *File) MaxPending() int { return s.o.MaxPending }

// Add records r, a new proposal (its ID, Created and Status are set
// here), unless MaxPending proposals wait already (ErrFull) or the file
// has no room for it even with every decided proposal compacted
// (ErrCapped).
func (s *File) Add(r gen.ProposalRecord) (*Proposal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending() >= s.o.MaxPending {
		return nil, ErrFull
	}
	p := Proposal{ProposalRecord: r}
	p.ID, p.Created, p.Status = NewID(), s.o.Now().UTC().Truncate(time.Second), gen.ProposalStatusPending
	p.Votes, p.Decision, p.Digest = nil, nil, nil
	if err := s.write(&p, true); err != nil {
		return nil, err
	}
	return p.clone(), nil
}

// Get returns a copy of the proposal id.
func (s *File) Get(id string) (*Proposal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.items[id]
	if !ok {
		return nil, ErrNotFound
	}
	return s.full(p)
}

// Filter selects proposals for List.
type Filter struct {
	Status gen.ProposalStatus
	Slug   string
	// After is the id of the last proposal of the previous page: the page
	// starts after it. Empty starts at the oldest.
	After string
	// Limit bounds the page; zero means 50.
	Limit int
}

// List returns the proposals f selects, oldest first, and whether more
// follow the page.
func (s *File) List(f Filter) ([]*Proposal, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	page, more := list(s.order, s.items, f)
	for i, p := range page {
		// A body that cannot be read back is left out rather than the
		// page refused: the rest of the proposal is in memory.
		if whole, err := s.full(p); err == nil {
			page[i] = whole
		}
	}
	return page, more
}

// ListAll is List over proposals read with Read.
func ListAll(ps []*Proposal, f Filter) ([]*Proposal, bool) {
	items := make(map[string]*Proposal, len(ps))
	order := make([]string, 0, len(ps))
	for _, p := range ps {
		items[p.ID] = p
		order = append(order, p.ID)
	}
	return list(order, items, f)
}

func list(order []string, items map[string]*Proposal, f Filter) ([]*Proposal, bool) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	start := 0
	if f.After != "" {
		for i, id := range order {
			if id == f.After {
				start = i + 1
				break
			}
		}
	}
	var out []*Proposal
	for _, id := range order[start:] {
		p := items[id]
		if f.Status != "" && p.Status != f.Status || f.Slug != "" && p.Slug != f.Slug {
			continue
		}
		if len(out) == f.Limit {
			return out, true
		}
		out = append(out, p.clone())
	}
	return out, false
}

// AddVote records v on the pending proposal id, replacing an earlier vote
// by the same key. The same vote again (same key, vote and time) writes
// nothing: votes are public, and one sent again must not grow the file.
// The caller has verified v (VerifyVote).
func (s *File) AddVote(id string, v Vote) (*Proposal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := s.pendingCopy(id)
	if err != nil {
		return nil, err
	}
	replaced := false
	for i, old := range next.Votes {
		if old.Pubkey == v.Pubkey {
			if old.Vote == v.Vote && old.Time.Equal(v.Time) {
				return next, nil // a copy already: nothing is written
			}
			if !v.Time.After(old.Time) {
				// Not even in the same second: two statements of one
				// second could otherwise be sent in turn for ever.
				return nil, fmt.Errorf("this key voted on the proposal at %s, not before this vote was signed; sign a new vote", old.Time.Format(time.RFC3339))
			}
			next.Votes[i], replaced = v, true
		}
	}
	if !replaced {
		next.Votes = append(next.Votes, v)
	}
	if err := s.write(next, false); err != nil {
		return nil, err
	}
	return next.clone(), nil
}

// Decide records the curator's decision on the pending proposal id:
// status accepted or rejected.
func (s *File) Decide(id string, status gen.ProposalStatus, d Decision) (*Proposal, error) {
	if status != gen.ProposalStatusAccepted && status != gen.ProposalStatusRejected {
		return nil, fmt.Errorf("a decision is %s or %s, not %q", gen.ProposalStatusAccepted, gen.ProposalStatusRejected, status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := s.pendingCopy(id)
	if err != nil {
		return nil, err
	}
	d.Time = s.o.Now().UTC().Truncate(time.Second)
	if s.key != nil {
		signDecision(s.key, id, status, &d)
	}
	next.Status, next.Decision = status, &d
	if err := s.write(next, false); err != nil {
		return nil, err
	}
	return next.clone(), nil
}

// pendingCopy returns a copy of the pending proposal id to change, or
// ErrNotFound or ErrDecided. The caller holds s.mu.
func (s *File) pendingCopy(id string) (*Proposal, error) {
	p, ok := s.items[id]
	switch {
	case !ok:
		return nil, ErrNotFound
	case p.Status != gen.ProposalStatusPending:
		return nil, ErrDecided
	}
	return s.full(p)
}
