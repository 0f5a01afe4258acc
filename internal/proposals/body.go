package proposals

import (
	"github.com/three-good-sources/3gs/gen"

	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/three-good-sources/3gs/internal/safefile"
)

// A proposal's body, the category or source it proposes (up to 256 KiB),
// stays in the file, not in memory: a File holds every other field, and
// reads the body back when a proposal is shown or changed. A server
// whose file is at its cap (64 MiB) thus starts and runs in a few MiB
// for its proposals, not the whole file again.
//
// A stripped proposal's body is in the line at off, bodyLine bytes long,
// which may hold an older state of it (before a vote or a decision in
// bulk): what memory holds is its state, the line only its body.

// stripped is a copy of p to keep in memory: without its body, which is
// in the line at off, and with strings of its own.
func stripped(p *Proposal, off int64) *Proposal {
	c := *p
	if p.Category != nil || p.Source != nil {
		c.Category, c.Source, c.stripped, c.off, c.bodyLine = nil, nil, true, off, p.line
	}
	c.own()
	return &c
}

// own gives p's strings memory of their own. A decoded line's strings
// may share its bytes, so one kept string (an id, a reason) would keep
// the whole line, body and all, in memory.
func (p *Proposal) own() {
	for _, s := range []*string{&p.ID, &p.Slug, &p.Reason} {
		*s = strings.Clone(*s)
	}
	p.Contact, p.Client, p.Digest = cloned(p.Contact), cloned(p.Client), cloned(p.Digest)
	p.Action, p.Status = gen.ProposalAction(strings.Clone(string(p.Action))), gen.ProposalStatus(strings.Clone(string(p.Status)))
	p.Votes = slices.Clone(p.Votes)
	for i := range p.Votes {
		v := &p.Votes[i]
		v.Pubkey, v.Vote, v.Signature = strings.Clone(v.Pubkey), gen.VoteChoice(strings.Clone(string(v.Vote))), strings.Clone(v.Signature)
	}
	if p.Decision != nil {
		d := *p.Decision
		d.Reason, d.Actor, d.Version, d.Signature = cloned(d.Reason), strings.Clone(d.Actor), cloned(d.Version), cloned(d.Signature)
		p.Decision = &d
	}
}

// cloned is a copy of the optional string s with memory of its own.
func cloned(s *string) *string {
	if s == nil {
		return nil
	}
	c := strings.Clone(*s)
	return &c
}

// full is a copy of p with its body, read back from the file when it was
// stripped. The caller holds s.mu.
func (s *File) full(p *Proposal) (*Proposal, error) {
	c := p.clone()
	if !p.stripped {
		return c, nil
	}
	f, err := s.openBody()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return withBody(f, c)
}

// openBody opens the file to read bodies from, refusing a link.
func (s *File) openBody() (*os.File, error) {
	f, err := safefile.OpenNoFollow(s.path, what, os.O_RDONLY|safefile.OpenFlags, 0)
	if errors.Is(err, safefile.ErrSymlink) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("reading a proposal's body from %s: %w", s.path, err)
	}
	return f, nil
}

// withBody fills c, a copy of a stripped proposal, with the body its line
// in f holds.
func withBody(f io.ReaderAt, c *Proposal) (*Proposal, error) {
	line := make([]byte, c.bodyLine)
	if _, err := f.ReadAt(line, c.off); err != nil {
		return nil, fmt.Errorf("reading proposal %s's body at byte %d: %w", c.ID, c.off, err)
	}
	q, err := decodeLine(line[:len(line)-1])
	if err != nil || q.ID != c.ID {
		return nil, fmt.Errorf("proposal %s's body at byte %d of the proposals file is not where this process left it; restart the server to read the file again", c.ID, c.off)
	}
	c.Category, c.Source, c.stripped = q.Category, q.Source, false
	return c, nil
}
