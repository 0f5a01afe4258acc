package peer

import (
	"slices"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher"
)

// Status is what is known of a peer right now.
type Status string

const (
	// Pending: not fetched yet, and nothing cached.
	Pending Status = "pending"
	// Fresh: the last fetch was accepted, within the stale age.
	Fresh Status = "fresh"
	// Stale: the last fetch was accepted, but longer ago than the stale
	// age (the peer is being retried).
	Stale Status = "stale"
	// Unreachable: the last fetch failed to reach the peer's documents
	// (connection, timeout, HTTP status).
	Unreachable Status = "unreachable"
	// Refused: the peer answered with something that failed a check.
	Refused Status = "refused"
)

// Peer is a snapshot of one endorsed peer. Copy, when not nil, is the
// last accepted registry, served whatever Status says; a copy whose
// signature no longer vouches for it (expired) is left out, and the peer
// reported refused.
type Peer struct {
	Endorsement gen.Endorsement
	Status      Status
	// Reason says why the last fetch failed (Unreachable, Refused), in
	// full, for the log: it may quote what the peer sent.
	Reason string
	// Public is the same reason as anyone may see it (get_endorsements):
	// one of the coarse reasons of PublicReason, never anything the peer
	// sent.
	Public string
	// LastAttempt is zero before the first fetch.
	LastAttempt time.Time
	Copy        *Copy
	Matcher     matcher.Matcher
	// Health is what the peer's own signed health file says of its
	// sources (FetchHealth), or nil when it publishes none or it was
	// refused.
	Health *Health
}

// Stale reports whether the copy is older than the stale age at now.
func (p *Peer) Stale(now time.Time, after time.Duration) bool {
	return p.Copy != nil && now.Sub(p.Copy.FetchedAt) > after
}

// Sorted returns ps ordered by key, for output that must not depend on
// the order of the registry's endorsements.
func Sorted(ps []Peer) []Peer {
	return slices.SortedFunc(slices.Values(ps), func(a, b Peer) int {
		switch {
		case a.Endorsement.Pubkey < b.Endorsement.Pubkey:
			return -1
		case a.Endorsement.Pubkey > b.Endorsement.Pubkey:
			return 1
		}
		return 0
	})
}
