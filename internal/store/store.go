// Package store writes a registry file, its signature and its audit log,
// the one way every change to them is made: the curator tools of a
// running server (internal/tools), 3gs sign, endorse, init and audit
// migrate (internal/cli) all go through Commit.
//
// A change is one transaction:
//
//  1. its audit log entries are appended (and synced) first, so no change
//     reaches the file untraced: if the log cannot be written, nothing is;
//  2. then the registry is written, with its signature naming the entries
//     as the log's head (signature.WriteSignedWith), or only the signature
//     when the bytes stay;
//  3. if that write fails, the entries are taken back, unless the registry
//     was replaced after all (only the signature's last rename failed), in
//     which case they record what is on disk.
//
// A crash between 1 and 2 leaves entries after the head the signature
// covers, which the next opening of the log (OpenLog with repair, as a
// starting server and 3gs sign do) moves to LOG.cut: that is the one
// crash-recovery path. The other order would leave a change with no entry.
//
// A command holds the registry's lock (internal/safefile); in a server,
// internal/curation's Node is the one user of the Editor and serializes
// its changes. No caller of the store takes a lock for it.
package store

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
)

// Actor is the name entries made by 3gs itself, or by a caller without a
// token (stdio), carry.
const Actor = "cli"

// perm is the mode of the registry and signature files the store writes.
const perm = 0o644

// Commit is one change to a registry file: entries for its audit log, the
// registry's new bytes, and its signature.
type Commit struct {
	// Path is the registry file.
	Path string
	// Log records the change; nil records nothing (a registry without a
	// log, such as one endorse changes without the curator key).
	Log *auditlog.Log
	// Entries are appended to Log first, signed with Key when set. None
	// appends nothing; the signature then names Head.
	Entries []*gen.AuditEntry
	// Head is the log head the signature names when there are no Entries;
	// nil names none.
	Head *auditlog.Head
	// Key signs the registry; nil writes the registry alone, unsigned, or
	// with no Data only records the entries.
	Key ed25519.PrivateKey
	// Now is when the signature is made; Expires when it stops vouching.
	Now, Expires time.Time
	// Data is the registry's new bytes; nil writes only a new signature of
	// Base, leaving the registry file as it is (rewriting it could undo a
	// hand edit made since it was read).
	Data []byte
	// Base is what the registry file holds now. With Data, the file is
	// written only while it still holds Base (ErrChanged otherwise), and a
	// failed write takes the entries back only while it does. Nil: no
	// such check (a new file), and a failed write keeps the entries.
	Base []byte
	// Limit bounds reading the file back to compare it with Base; zero
	// means len(Base).
	Limit int64
}

// Done is what a committed change left.
type Done struct {
	// Head is the log head the signature names (the zero Head when none).
	Head auditlog.Head
	// Signature is the signature document written, nil when unsigned.
	Signature []byte
}

// ErrChanged is the cause of an Error when the registry file no longer
// held Base when the change was about to write it.
var ErrChanged = errors.New("the registry file changed since it was read")

// Error is a change that failed.
type Error struct {
	// Err is what failed.
	Err error
	// InLog: appending the entries failed, so nothing was written.
	// Otherwise the registry or signature write failed, after the entries
	// (if any) were appended.
	InLog bool
	// Kept: the registry was replaced after all (only the signature's
	// last rename failed), or with a nil Base nothing said it was not, so
	// the entries, if any, stay: they record what is on disk.
	Kept bool
	// UndoErr is why taking them back failed; the next opening of the log
	// removes them.
	UndoErr error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Commit makes the change c, as the package comment describes.
func (c Commit) Commit() (Done, error) {
	head, undo := auditlog.Head{}, func() error { return nil }
	if c.Head != nil {
		head = *c.Head
	}
	logged := false
	if c.Log != nil && len(c.Entries) > 0 {
		undo = c.Log.Checkpoint()
		h, err := c.Log.Append(c.Key, c.Entries...)
		if err != nil {
			return Done{}, &Error{Err: err, InLog: true}
		}
		head, logged = h, true
	}
	fail := func(err error, kept bool) (Done, error) {
		e := &Error{Err: err, Kept: kept}
		if logged && !kept {
			e.UndoErr = undo()
		}
		return Done{}, e
	}
	o := signature.Options{Expires: c.Expires}
	if head.Seq > 0 {
		o.Log = &head
	}
	switch {
	case c.Data == nil && c.Key == nil:
		return Done{Head: head}, nil
	case c.Data == nil:
		doc := signature.SignWith(c.Base, c.Key, c.Now, o)
		if err := safefile.Write(c.Path+signature.Suffix, doc, perm); err != nil {
			return fail(err, false)
		}
		return Done{Head: head, Signature: doc}, nil
	case c.Base != nil && !c.holdsBase():
		return fail(ErrChanged, false)
	case c.Key == nil:
		if err := safefile.Write(c.Path, c.Data, perm); err != nil {
			return fail(err, c.Base == nil || !c.holdsBase())
		}
		return Done{Head: head}, nil
	}
	doc, err := signature.WriteSignedWith(c.Path, c.Data, c.Key, c.Now, o, perm)
	if err != nil {
		return fail(err, c.Base == nil || !c.holdsBase())
	}
	return Done{Head: head, Signature: doc}, nil
}

// holdsBase says whether the registry file still holds c.Base.
func (c Commit) holdsBase() bool {
	limit := c.Limit
	if limit < int64(len(c.Base)) {
		limit = int64(len(c.Base))
	}
	cur, err := safefile.Read(c.Path, limit, "registry")
	return err == nil && bytes.Equal(cur, c.Base)
}

// RemoveStale removes the temporary files interrupted writes of the
// registry at path left (see safefile.RemoveStale); the process calling
// it holds the registry's lock.
func RemoveStale(path string, now time.Time) (int, error) {
	return safefile.RemoveStale(path, now)
}
