package proposals

import (
	"github.com/three-good-sources/3gs/gen"

	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Selection chooses pending proposals for a decision in bulk, by one of
// its fields: the curator's way out of a flood (reject_proposal and
// `3gs proposals reject` both decide through it).
type Selection struct {
	// IDs are proposals by id; each must be pending.
	IDs []string
	// AllPending is every pending proposal.
	AllPending bool
	// OlderThan is the pending proposals made before it.
	OlderThan time.Time
	// FromClient is the pending proposals sent from within it (an IPv4
	// address is a /32, an IPv6 client the prefix the rate counted).
	FromClient netip.Prefix
}

// Reject rejects, with d, the pending proposals sel chooses and returns
// their ids, oldest first; none chosen is no error. With IDs, an id that
// is not pending fails the whole call (the error wraps ErrNotFound or
// ErrDecided and names it) and nothing is decided. The file is rewritten
// once, not appended to per proposal, and then compacted as usual, so
// rejecting a flood also frees its room.
func (s *File) Reject(sel Selection, d Decision) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var chosen []*Proposal
	if len(sel.IDs) > 0 {
		seen := map[string]bool{}
		for _, id := range sel.IDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			// Not pendingCopy: the bodies stay in the file; the
			// compaction below writes them with the decision.
			p, ok := s.items[id]
			switch {
			case !ok:
				return nil, fmt.Errorf("%s: %w; nothing was rejected", id, ErrNotFound)
			case p.Status != gen.ProposalStatusPending:
				return nil, fmt.Errorf("%s: %w; nothing was rejected", id, ErrDecided)
			}
			chosen = append(chosen, p.clone())
		}
	} else {
		for _, id := range s.order {
			if p := s.items[id]; p.Status == gen.ProposalStatusPending && sel.chooses(p) {
				chosen = append(chosen, p.clone())
			}
		}
	}
	if len(chosen) == 0 {
		return nil, nil
	}
	d.Time = s.o.Now().UTC().Truncate(time.Second)
	before := make([]*Proposal, 0, len(chosen))
	ids := make([]string, 0, len(chosen))
	for _, p := range chosen {
		old := s.items[p.ID]
		before = append(before, old)
		dd := d
		if s.key != nil {
			signDecision(s.key, p.ID, gen.ProposalStatusRejected, &dd)
		}
		p.Status, p.Decision = gen.ProposalStatusRejected, &dd
		// The line grows by what the decision adds; a stripped body
		// is the same bytes before and after.
		was, err := encodeLine(old)
		if err != nil {
			s.restore(before)
			return nil, err
		}
		now, err := encodeLine(p)
		if err != nil {
			s.restore(before)
			return nil, err
		}
		p.line = old.line + len(now) - len(was)
		s.put(p)
		ids = append(ids, p.ID)
	}
	s.tidy(false)
	if err := s.compact(); err != nil {
		s.restore(before)
		return nil, fmt.Errorf("%w; nothing was rejected", err)
	}
	return ids, nil
}

// restore puts back the states ps, taken before a change that failed.
func (s *File) restore(ps []*Proposal) {
	for _, p := range ps {
		s.put(p)
	}
}

// chooses reports whether p matches the filter of sel.
func (sel Selection) chooses(p *Proposal) bool {
	switch {
	case sel.AllPending:
		return true
	case !sel.OlderThan.IsZero():
		return p.Created.Before(sel.OlderThan)
	case sel.FromClient.IsValid():
		return p.Client != nil && clientWithin(*p.Client, sel.FromClient)
	}
	return false
}

// clientWithin reports whether the client recorded (an address, or the
// prefix the rate counted) lies within f, or f within it: a curator who
// names one address of an IPv6 client's /64 means that client.
func clientWithin(recorded string, f netip.Prefix) bool {
	r, err := parsePrefix(recorded)
	if err != nil {
		return false
	}
	if f.Bits() <= r.Bits() {
		return f.Contains(r.Addr())
	}
	return r.Contains(f.Addr())
}

func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.WithZone("").Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// ParseClient reads a client as a curator names one: an IP address
// (192.0.2.1, 2001:db8::5) or a prefix (2001:db8:1:2::/64, 198.51.100.0/24).
func ParseClient(s string) (netip.Prefix, error) {
	p, err := parsePrefix(strings.TrimSpace(s))
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("a client is an IP address (192.0.2.1, 2001:db8::5) or a prefix (2001:db8:1:2::/64), as `3gs proposals show` prints it, not %q", s)
	}
	return p, nil
}

// ParseOlderThan reads an age as a curator gives one, at now: a duration
// (72h, 90m, or whole days: 3d) or a time (RFC 3339, 2026-12-01T10:00:00Z,
// or a date, 2026-12-01, at midnight UTC); it returns the time before
// which a proposal counts as older.
func ParseOlderThan(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days >= 0 {
			return now.Add(-time.Duration(days) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, errors.New("an age is not negative: give 72h, not -72h")
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("older than %q: give a duration (72h, 90m, 3d) or a time (2026-12-01T10:00:00Z, or 2026-12-01)", s)
}
