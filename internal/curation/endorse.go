package curation

import (
	"slices"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
)

// Endorsement is what Endorse is asked to do: add or change the
// endorsement of the curator Pubkey (pk:… form) at URL, or, with Remove,
// remove it.
type Endorsement struct {
	Pubkey string
	// URL is where the endorsed curator's registry is; Name and Since,
	// when empty, keep what the endorsement being changed lists (Since is
	// today, UTC, for a new one).
	URL, Name, Since string
	Remove           bool
	// KeepVersion leaves the registry's version as it is (a command's
	// node only: a server raises it with every change).
	KeepVersion bool
	// Actor is who endorses, as the audit log records it: an admin
	// token's name, or the command's (empty: store.Actor).
	Actor string
}

// EndorseKind is what Endorse did.
type EndorseKind int

const (
	Added EndorseKind = iota
	Updated
	Removed
)

// Endorsed is what Endorse did: Kind to Endorsement, at index At of the
// registry's endorsements (where it was, for one removed).
type Endorsed struct {
	*Changed
	Kind        EndorseKind
	Endorsement gen.Endorsement
	At          int
}

// OwnCuratorError is an endorsement of the registry's own curator.
type OwnCuratorError struct{ Path, Pubkey string }

func (e *OwnCuratorError) Error() string {
	return e.Pubkey + " is the curator key of " + e.Path + " itself; a registry does not endorse its own curator"
}

// NotEndorsedError is a removal of an endorsement the registry does not
// have; Listed are the keys it endorses.
type NotEndorsedError struct {
	Path, Pubkey string
	Listed       []string
}

func (e *NotEndorsedError) Error() string { return e.Path + " does not endorse " + e.Pubkey }

// UnchangedError is an endorsement already as asked: nothing was written.
type UnchangedError struct{ Endorsement gen.Endorsement }

func (e *UnchangedError) Error() string {
	return "already endorses " + e.Endorsement.Pubkey + " as asked"
}

// Endorse adds, changes or removes one endorsement of the registry file
// (3gs endorse, and the endorse_curator tool of the server that holds
// the file), recorded in the audit log as an endorse whose detail says
// what it did (EndorseDetail) and signed when the node holds the curator
// key; without it a command's node writes the registry alone, for the
// curator to sign. With the key, a registry whose signature no longer
// verifies is refused (*UnverifiedError): re-signing it would bless
// whatever changed it, an added endorsement among them.
func (n *Node) Endorse(x Endorsement) (*Endorsed, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := &Endorsed{}
	path := n.path()
	actor := x.Actor
	if actor == "" {
		actor = n.actor()
	}
	o := fileOptions{keepVersion: x.KeepVersion, describe: func() string { return EndorseDetail(out.Kind, out.Endorsement) }}
	changed, err := n.change(actor, gen.AuditActionEndorse, "", o, func(doc *gen.Registry) error {
		if own, err := curatorkey.ParsePublicKey(doc.Curator.Pubkey); err == nil && curatorkey.URI(own) == x.Pubkey {
			return &OwnCuratorError{Path: path, Pubkey: x.Pubkey}
		}
		at := slices.IndexFunc(doc.Endorsements, func(e gen.Endorsement) bool { return e.Pubkey == x.Pubkey })
		out.At = at
		switch {
		case x.Remove && at < 0:
			listed := make([]string, len(doc.Endorsements))
			for i, e := range doc.Endorsements {
				listed[i] = e.Pubkey
			}
			return &NotEndorsedError{Path: path, Pubkey: x.Pubkey, Listed: listed}
		case x.Remove:
			out.Kind, out.Endorsement = Removed, doc.Endorsements[at]
			doc.Endorsements = slices.Delete(doc.Endorsements, at, at+1)
			return nil
		}
		e := gen.Endorsement{Pubkey: x.Pubkey, URL: x.URL, Since: x.Since}
		if x.Name != "" {
			name := x.Name
			e.Name = &name
		}
		if at >= 0 {
			// What was not given is kept from the endorsement it
			// replaces: the day you began vouching does not move
			// because the URL did.
			old := doc.Endorsements[at]
			if e.Name == nil {
				e.Name = old.Name
			}
			if e.Since == "" {
				e.Since = old.Since
			}
			if sameEndorsement(old, e) {
				return &UnchangedError{Endorsement: e}
			}
			doc.Endorsements[at] = e
			out.Kind, out.Endorsement = Updated, e
			return nil
		}
		if e.Since == "" {
			e.Since = n.now().UTC().Format(time.DateOnly)
		}
		out.At, out.Kind, out.Endorsement = len(doc.Endorsements), Added, e
		doc.Endorsements = append(doc.Endorsements, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Changed = changed
	return out, nil
}

// EndorseDetail is what the audit log entry of an endorsement says it
// was: "endorse add KEY URL", "endorse update KEY URL" (another URL, name
// or day for a key endorsed already) or "endorse remove KEY".
func EndorseDetail(kind EndorseKind, e gen.Endorsement) string {
	switch kind {
	case Removed:
		return "endorse remove " + e.Pubkey
	case Updated:
		return "endorse update " + e.Pubkey + " " + e.URL
	}
	return "endorse add " + e.Pubkey + " " + e.URL
}

func sameEndorsement(a, b gen.Endorsement) bool {
	return a.Pubkey == b.Pubkey && a.URL == b.URL && a.Since == b.Since &&
		(a.Name == nil) == (b.Name == nil) && (a.Name == nil || *a.Name == *b.Name)
}
