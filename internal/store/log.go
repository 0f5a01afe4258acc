package store

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
)

// LogOptions say how to open a registry's audit log.
type LogOptions struct {
	// Path is the log file.
	Path string
	// Key is the curator key its signed entries verify under.
	Key ed25519.PublicKey
	// SHA256 is the digest of the registry the log must lead to.
	SHA256 string
	// Covered is the head the registry's signature covers, when that
	// signature vouches for these very bytes.
	Covered *auditlog.Head
	// Repair cuts what a crash left (see auditlog.Repair): the one
	// crash-recovery path, taken by whoever holds the registry's lock
	// before changing it. Without, the log is only checked, and is open
	// for appending only when nothing was left.
	Repair bool
	// NeedCovered refuses a signed log when the registry's signature,
	// which verified, names no head (ErrUncovered).
	NeedCovered bool
}

// ErrUncovered: the log is signed by the curator, but the registry's
// verified signature names no log head, so it is older than the log.
var ErrUncovered = errors.New("the registry's signature names no head of the signed audit log")

// Log is an audit log opened against the registry it records.
type Log struct {
	// Log appends; nil when the log may not be appended to (opened
	// without Repair, and a crash left something in it).
	*auditlog.Log
	// Served is the head /audit serves up to: the one the registry's
	// signature covers, or else the log's last entry.
	Served auditlog.Head
	// Unrecorded: the registry is not the one the log's last entry
	// produced (see auditlog.Fit).
	Unrecorded bool
}

// OpenLog reads and checks the audit log o names, and returns it open for
// appending. Errors are auditlog's (a *auditlog.Problem, ErrLegacy,
// ErrMissing, ErrRepair) or ErrUncovered, for the caller to explain; the
// notes say what was repaired.
func OpenLog(o LogOptions) (*Log, []string, error) {
	ro := auditlog.Options{Key: o.Key}
	if o.Covered != nil {
		ro.Mark = o.Covered.Seq
	}
	rep, err := auditlog.Read(o.Path, ro)
	if err != nil {
		return nil, nil, err
	}
	if o.NeedCovered && rep.Signed() && o.Covered == nil {
		return nil, nil, ErrUncovered
	}
	var (
		notes []string
		fit   *auditlog.Fit
	)
	if o.Repair {
		rep, fit, notes, err = auditlog.Repair(o.Path, rep, ro, o.SHA256, o.Covered)
	} else {
		fit, err = auditlog.Match(rep, o.SHA256, o.Covered)
	}
	if err != nil {
		return nil, notes, err
	}
	l := &Log{Served: rep.Head, Unrecorded: fit.Unrecorded}
	if o.Covered != nil {
		l.Served = *o.Covered
	}
	if rep.Torn == 0 && (fit.Pending == 0 || o.Repair) {
		l.Log = auditlog.Open(o.Path, rep)
	}
	return l, notes, nil
}

// CoveredHead is the head the signature beside the registry file at path
// covers, when that signature verifies under pub for reg's very bytes;
// after a hand edit it names the head of a registry no longer on disk.
// The file is hashed as it is read, not read whole: reg holds its bytes
// already, and a second copy was 147 MB of 3gs sign's peak at 100,000
// categories.
func CoveredHead(path string, reg *registry.Registry, pub ed25519.PublicKey) *auditlog.Head {
	// A file of any other size is not reg's bytes, so reading at most
	// reg.Size() loses nothing and needs no limit of its own.
	sum, err := safefile.Digest(path, int64(reg.Size()), "registry")
	if err != nil || hex.EncodeToString(sum[:]) != reg.SHA256() {
		return nil
	}
	doc, _, err := signature.SignatureOf(path, reg.Bytes(), reg.SHA256())
	if err != nil || doc == nil {
		return nil
	}
	if v, err := signature.VerifyDigest(reg.Bytes(), reg.SHA256(), doc, pub); err == nil {
		return v.Log
	}
	return nil
}

// stamp is the time an entry made at now carries: in UTC, without the
// monotonic reading, so it equals the entry read back (the encoder writes
// it as RFC 3339 in UTC, to the nanosecond).
func stamp(now time.Time) time.Time { return now.UTC() }

// CatchUp returns the entries that bring the log whose last entry is last
// to the registry reg (see auditlog.CatchUp), made by 3gs itself: a
// change found outside the log is recorded as action.
func CatchUp(last *gen.AuditEntry, action gen.AuditAction, now time.Time, reg *registry.Registry) []*gen.AuditEntry {
	return auditlog.CatchUp(last, action, stamp(now), Actor, reg.Version(), reg.SHA256())
}

// Entry is the entry of a change from old to next made by actor (Actor
// when empty) through action, to the category slug when not empty.
func Entry(now time.Time, action gen.AuditAction, actor, slug string, old, next *registry.Registry) *gen.AuditEntry {
	if actor == "" {
		actor = Actor
	}
	before := old.SHA256()
	e := &gen.AuditEntry{Time: stamp(now), Action: action, Actor: actor, Version: next.Version(), Before: &before, After: next.SHA256()}
	if slug != "" {
		e.Slug = &slug
	}
	return e
}
