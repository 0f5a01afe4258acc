// Package proposals keeps the changes the public proposes to a registry
// (propose_change), the votes endorsed curators cast on them, and the
// curator's decisions, in a file beside the registry
// (REGISTRY.proposals.jsonl).
//
// The file is JSON Lines: each line is one proposal's whole state after a
// change to it (proposed, voted on, decided), so the last line of an id is
// its state. Lines are appended and synced one at a time; a crash leaves
// at worst a torn last line, which Open cuts. One process writes it, the
// holder of its lock (internal/safefile): the server that edits the
// registry, or a command while no server runs. The file is bounded: at
// most MaxPending proposals wait at once, decided ones are dropped once
// older than Retention, and the file is rewritten without superseded lines
// once they outnumber the live ones.
package proposals

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/three-good-sources/3gs/gen"
)

// Suffix names the proposals file beside its registry.
const Suffix = ".proposals.jsonl"

// PathFor is the proposals file of the registry at path.
func PathFor(registryPath string) string { return registryPath + Suffix }

// A proposal's actions and statuses are the schema's
// (proposal.schema.json#/$defs/proposalAction and proposalStatus):
// gen.ProposalActionAddCategory, gen.ProposalStatusPending and the rest.

// Bounds of what one proposal may carry.
const (
	// MaxReason is the longest reason, in characters.
	MaxReason = 1000
	// MaxContact is the longest contact, in characters.
	MaxContact = 200
	// MaxLine is the longest line the file holds, in bytes: a whole
	// category (a registry's categories are far smaller) with its votes.
	MaxLine = 256 << 10
	// DefaultMaxPending is --max-pending-proposals' default.
	DefaultMaxPending = 1000
	// DefaultRetention is --proposal-retention's default.
	DefaultRetention = 90 * 24 * time.Hour
	// DefaultMaxBytes is --max-proposals-bytes' default: the cap on the
	// whole file, pending and decided, which a small server's disk and
	// memory hold with room to spare (a restart reads it all).
	DefaultMaxBytes = 64 << 20
	// DefaultBodyRetention is how long a decided proposal keeps its body
	// (category, source, reason, contact, votes): a day to read it again,
	// then only its id, times, decision and a digest of the body stay.
	DefaultBodyRetention = 24 * time.Hour
)

// Proposal is one proposed change and what became of it: a line of the
// file.
type Proposal struct {
	ID       string             `json:"id"`
	Created  time.Time          `json:"created"`
	Action   gen.ProposalAction `json:"action"`
	Slug     string             `json:"slug"`
	Category *gen.Category      `json:"category,omitempty"`
	Rank     int                `json:"rank,omitempty"`
	Source   *gen.Source        `json:"source,omitempty"`
	Reason   string             `json:"reason"`
	Contact  string             `json:"contact,omitempty"`
	Status   gen.ProposalStatus `json:"status"`
	Votes    []Vote             `json:"votes,omitempty"`
	Decision *Decision          `json:"decision,omitempty"`
	// Client is who sent it, as the rate counts clients (an IPv4 address,
	// an IPv6 prefix); empty for the stdio client. The curator's filter,
	// never shown to the public.
	Client string `json:"-"`
	// Digest is set when a decided proposal was compacted: the SHA-256 of
	// the line that last held its body, which was then dropped.
	Digest string `json:"digest,omitempty"`
	// line is the length of the line holding this state, newline
	// included: what a compaction writes for it. When stripped, the body
	// (Category, Source) is not in memory but in the line at off, bodyLine
	// bytes long (see body.go).
	line, bodyLine int
	off            int64
	stripped       bool
}

// Vote is an endorsed curator's signed vote (see Statement).
type Vote struct {
	Pubkey    string         `json:"pubkey"`
	Vote      gen.VoteChoice `json:"vote"`
	Time      time.Time      `json:"time"`
	Signature string         `json:"signature"`
}

// Decision is the curator's.
type Decision struct {
	Time   time.Time `json:"time"`
	Reason string    `json:"reason,omitempty"`
	Actor  string    `json:"actor"`
	// Version is the registry version the accepted change produced; empty
	// for a rejection or an accepted report, which change nothing.
	Version string `json:"version,omitempty"`
}

// Errors a Store returns.
var (
	// ErrFull: MaxPending proposals are waiting already.
	ErrFull = errors.New("too many proposals are waiting for the curator")
	// ErrCapped: the file is at its cap (MaxBytes) with proposals the
	// curator has not decided, so a new one has no room.
	ErrCapped = errors.New("the proposals file is at its size cap with proposals waiting for the curator")
	// ErrNotFound: no proposal has that id (or it was decided long ago
	// and dropped).
	ErrNotFound = errors.New("no such proposal")
	// ErrDecided: the proposal was accepted or rejected already.
	ErrDecided = errors.New("the proposal was decided already")
)

// NewID returns a new proposal id: "p" and 16 hex digits.
func NewID() string {
	var b [8]byte
	rand.Read(b[:])
	return "p" + hex.EncodeToString(b[:])
}

// ValidID reports whether s has the form NewID makes.
func ValidID(s string) bool {
	if len(s) != 17 || s[0] != 'p' {
		return false
	}
	_, err := hex.DecodeString(s[1:])
	return err == nil
}

// clone copies p deeply enough that the copy's votes and decision may be
// changed without touching p.
func (p *Proposal) clone() *Proposal {
	c := *p
	c.Votes = append([]Vote(nil), p.Votes...)
	if p.Decision != nil {
		d := *p.Decision
		c.Decision = &d
	}
	return &c
}

// Tally counts the votes for and against.
func (p *Proposal) Tally() (support, oppose int) {
	for _, v := range p.Votes {
		if v.Vote == gen.VoteChoiceSupport {
			support++
		} else {
			oppose++
		}
	}
	return support, oppose
}
