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
// file (gen.ProposalRecord, schema/proposal.schema.json), and where that
// line is. Its Client is the curator's filter, never shown to the
// public: the tools show a proposal as gen.Proposal, which has none, and
// nothing encodes a Proposal but the file's encoder.
type Proposal struct {
	gen.ProposalRecord
	// line is the length of the line holding this state, newline
	// included: what a compaction writes for it. When stripped, the body
	// (Category, Source) is not in memory but in the line at off, bodyLine
	// bytes long (see body.go).
	line, bodyLine int
	off            int64
	stripped       bool
}

// Vote is an endorsed curator's signed vote (see Statement).
type Vote = gen.ProposalVote

// Decision is the curator's. Its Version is the registry version an
// accepted change produced; absent for a rejection or an accepted
// report, which change nothing.
type Decision = gen.ProposalDecision

// Optional is s as the file holds an optional string: absent (nil) when
// empty.
func Optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Errors a File returns.
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
