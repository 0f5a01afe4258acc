package store

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// EditorConfig is how a server changes the registry file it serves.
type EditorConfig struct {
	// Path is the registry file.
	Path string
	// Key, when set, is the curator's key: every change is re-signed.
	Key ed25519.PrivateKey
	// AuditLog is the audit log each change is appended to.
	AuditLog string
	// Validity is how long the signatures the server writes vouch for the
	// registry when the signature it serves records no span of its own
	// (validity); zero means signature.DefaultValidity.
	Validity time.Duration
	// AllowExpired lets reload_registry load a registry whose signature
	// has expired, as --allow-expired does at start.
	AllowExpired bool
	// AllowUnsigned lets reload_registry serve a file whose signature does
	// not verify, reported as unverified, as --allow-unsigned does at start.
	AllowUnsigned bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ReadOnly, when not empty, is why this server may not change the
	// file (another process holds its lock); curator tools answer with it.
	ReadOnly string
	// MaxRegistryBytes bounds the registry file as --max-registry-bytes
	// does: reload_registry and the check before a change read at most
	// this much, and a change that would make the file larger is refused,
	// since the next start could not load it. Zero means registry.MaxSize.
	MaxRegistryBytes int64
	// Anchor is the curator key reload_registry trusts: --pubkey, the
	// public half of --key-file, or else the signer of the first verified
	// registry served (set by reload when still nil). AnchorFrom says which,
	// for messages. Once set, only a registry verified under it is loaded.
	Anchor     ed25519.PublicKey
	AnchorFrom string
}

// Editor is a server's writer of the registry file it serves: one change
// at a time, each through Commit, with the audit log it opened once.
// Readers never wait for it: the server stores a new snapshot only once
// the file and the log hold it. An Editor is used by one goroutine at a
// time: internal/curation's Node is its one user, and holds its own lock
// from reading the state served to publishing the next, so no caller of
// the store locks anything.
type Editor struct {
	EditorConfig
	// log is the audit log, opened at start (Open) or by the first change.
	log *Log
}

// Edit changes a registry document in place; it is given a copy of the
// one served, and fails to leave the registry as it was.
type Edit func(doc *gen.Registry) error

// ReadOnlyError is a change refused because this server may not write
// the file: Why says why (another process holds its lock).
type ReadOnlyError struct{ Why string }

func (e *ReadOnlyError) Error() string { return e.Why }

// KeyNeededError is a change refused because the registry (or, with Log,
// its audit log at Path) is signed by the curator and the editor holds no
// curator key: a change would break the signature.
type KeyNeededError struct {
	Log  bool
	Path string
}

func (e *KeyNeededError) Error() string {
	if e.Log {
		return "the audit log " + e.Path + " is signed by the curator key, which is not held here, so the change could not be recorded"
	}
	return "the registry is signed by its curator and no curator key is held here, so a change would break the signature"
}

// NewEditor returns the editor c describes.
func NewEditor(c EditorConfig) *Editor {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxRegistryBytes <= 0 {
		c.MaxRegistryBytes = registry.MaxSize
	}
	return &Editor{EditorConfig: c}
}

// validity is how long a signature written now vouches for the registry
// whose signature status is st: the span the curator chose when signing it
// (its signed_at to its expiry, as 3gs sign --expires wrote it), so that a
// server renewing or re-signing after a change never shortens or lengthens
// that choice; Validity (or signature.DefaultValidity) only when st records
// no span (unsigned, or a signature that never expires).
func (e *Editor) validity(st signature.Status) time.Duration {
	if st.Verified && !st.SignedAt.IsZero() && !st.Expires.IsZero() {
		if d := st.Expires.Sub(st.SignedAt); d > 0 {
			return d
		}
	}
	if e.Validity > 0 {
		return e.Validity
	}
	return signature.DefaultValidity
}

// Open reads and checks the audit log against cur, the registry served,
// and keeps it open for appending. With repair, it cuts
// what an interrupted write left; without (a read-only server, which must
// not write), it only checks.
func (e *Editor) Open(cur Served) ([]string, error) {
	l, notes, err := e.openLog(cur.Registry, cur.Signature, e.ReadOnly == "")
	if err == nil {
		e.log = l
	}
	return notes, err
}

// Served is the audit log head the server serves up to (/audit and
// get_audit_log), opening the log first if it is not yet.
func (e *Editor) Served(cur Served) (auditlog.Head, error) {
	if e.log == nil {
		if _, err := e.Open(cur); err != nil {
			return auditlog.Head{}, err
		}
	}
	return e.log.Served, nil
}

// openLog is Open without keeping the log: with repair, it cuts what an
// interrupted write left; without, it returns a log that cannot be
// appended to when something was left (nil Log).
func (e *Editor) openLog(reg *registry.Registry, st signature.Status, repair bool) (*Log, []string, error) {
	path := e.AuditLog
	pub, _ := reg.CuratorKey()
	o := LogOptions{Path: path, Key: pub, SHA256: reg.SHA256(), Repair: repair, NeedCovered: st.Verified}
	if st.Verified {
		o.Covered = st.Log
	}
	l, notes, err := OpenLog(o)
	switch {
	case errors.Is(err, ErrUncovered):
		// Whoever holds the key signs with the head since the log was
		// signed; a signature without one is older than the log, put back.
		return nil, nil, fmt.Errorf("the audit log %s is signed by the curator, but the registry's signature names no log head: it is older than the log (an old signed copy put back, or one signed by a 3gs before logs were signed). Put the newest registry and signature back, or, if this registry is the curator's, sign it again with 3gs sign, which records it in the log", path)
	case errors.Is(err, auditlog.ErrRepair):
		return nil, notes, err
	case err != nil:
		return nil, notes, &LogError{Path: path, Err: err}
	}
	return l, notes, nil
}

// Change applies edit to a copy of cur, the registry served, then
// validates the whole registry, records it in the audit log as action by
// caller (to category slug, when set; with what detail says, when it
// is set and says something, called once edit has run), writes it (signed when the editor
// has a key) and returns it as the caller is to serve it: with the
// signature written, modified now, and the log head that records it. Any
// failure leaves the file, its signature and the log as they were.
// Errors: edit's own, the registry's (strictjson.Errors), *ReadOnlyError,
// *KeyNeededError, *registry.TooLargeError, *LogError, and a failed write.
func (e *Editor) Change(cur Served, caller string, action gen.AuditAction, slug string, detail func() string, edit Edit) (Served, auditlog.Head, error) {
	reg, st, now, head, err := e.change(cur.Registry, cur.Signature, caller, action, slug, detail, edit)
	return Served{Registry: reg, Signature: st, Modified: now}, head, err
}

func (e *Editor) change(old *registry.Registry, st signature.Status, caller string, action gen.AuditAction, slug string, detail func() string, edit Edit) (*registry.Registry, signature.Status, time.Time, auditlog.Head, error) {
	var now time.Time
	var none auditlog.Head
	if e.ReadOnly != "" {
		return nil, st, now, none, &ReadOnlyError{Why: e.ReadOnly}
	}
	if st.Signed() && e.Key == nil {
		return nil, st, now, none, &KeyNeededError{Path: e.Path}
	}
	doc := old.Document()
	if err := edit(&doc); err != nil {
		return nil, st, now, none, err
	}
	now = e.Now()
	doc.Updated = now.UTC().Format(time.DateOnly)
	doc.Version = registry.BumpPatch(doc.Version)
	data := gen.EncodeRegistry(&doc) // schema order, so the file's diff is the change
	// A file larger than the limit could not be loaded by the next start.
	// That is the server's limit, not a fault in the caller's arguments, so
	// it is refused as a failed change rather than as invalid params.
	if int64(len(data)) > e.MaxRegistryBytes {
		return nil, st, now, none, &registry.TooLargeError{Size: int64(len(data)), Limit: e.MaxRegistryBytes}
	}
	reg, err := registry.Load(data)
	if err != nil {
		return nil, st, now, none, err
	}
	// The change is made to the bytes this server serves; if the file is
	// no longer those bytes (a hand edit, another program), writing would
	// silently throw that edit away.
	if err := e.CheckBase(old); err != nil {
		return nil, st, now, none, err
	}
	l, entries, err := e.record(now, old, st)
	if err != nil {
		return nil, st, now, none, err
	}
	entry := Entry(now, action, caller, slug, old, reg)
	if detail != nil {
		if d := detail(); d != "" {
			entry.Detail = &d
		}
	}
	entries = append(entries, entry)
	head := l.Head()
	done, err := Commit{
		Path: e.Path, Log: l, Entries: entries, Head: &head, Key: e.Key, Now: now, Expires: now.Add(e.validity(st)),
		Data: data, Base: old.Bytes(), Limit: e.MaxRegistryBytes,
	}.Commit()
	if err != nil {
		var ce *Error
		if !errors.As(err, &ce) || ce.InLog {
			return nil, st, now, none, err
		}
		err = ce.Err
		if ce.UndoErr != nil {
			err = fmt.Errorf("%w; and the audit log entry for it could not be removed (%v): the next start removes it", err, ce.UndoErr)
		}
		return nil, st, now, none, fmt.Errorf("writing %s: %w", e.Path, err)
	}
	e.log.Served = done.Head
	next := signature.Status{}
	if e.Key != nil {
		next = signature.Check(reg, done.Signature) // what was written, without reading it back
	}
	return reg, next, now, done.Head, nil
}

// CheckBase refuses a write unless the file on disk still holds base's
// bytes.
func (e *Editor) CheckBase(base *registry.Registry) error {
	data, err := signature.ReadLimited(e.Path, e.MaxRegistryBytes, "registry")
	if err != nil {
		return fmt.Errorf("reading %s before changing it: %w", e.Path, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != base.SHA256() {
		return fmt.Errorf("%s changed on disk since this server loaded it (sha256 %s, not the served %s): someone edited it by hand or another program wrote it. To keep that edit, run 3gs sign %s on this server's machine (with this server running, sign asks it to record, sign and serve the edit), or call reload_registry if the file was signed by its curator; then make the change again", e.Path, hex.EncodeToString(sum[:8])+"…", base.SHA256()[:16]+"…", signature.ShellQuote(e.Path))
	}
	return nil
}

// record returns the log, opening it if need be, and the entries it
// needs to reach old, the registry served with signature st: a start
// entry for a new log, a reload entry when old was changed outside the
// log.
func (e *Editor) record(now time.Time, old *registry.Registry, st signature.Status) (*auditlog.Log, []*gen.AuditEntry, error) {
	if e.log == nil {
		l, _, err := e.openLog(old, st, true)
		if err != nil {
			return nil, nil, err
		}
		e.log = l
	}
	if e.log.Log == nil {
		return nil, nil, errors.New("the audit log " + e.AuditLog + " holds what an interrupted write left, and this server did not repair it because it started read-only; restart it")
	}
	if e.log.Signed() && e.Key == nil {
		return nil, nil, &KeyNeededError{Log: true, Path: e.AuditLog}
	}
	return e.log.Log, CatchUp(e.log.Last(), gen.AuditActionReload, now, old), nil
}

// Renew signs cur, the registry served, again when its signature has
// less than half its validity left, for that same span, so that a server holding the curator
// key keeps its registry, and what peers and followers read from it, from
// expiring between changes. The bytes do not change, so neither does the
// log: the new signature covers the same head. It returns cur with the new
// signature and whether it signed; a server without the key, or one
// serving read-only, does nothing.
func (e *Editor) Renew(cur Served) (Served, bool, error) {
	st, signed, err := e.renew(cur.Registry, cur.Signature)
	cur.Signature = st
	return cur, signed, err
}

func (e *Editor) renew(reg *registry.Registry, st signature.Status) (signature.Status, bool, error) {
	if e.Key == nil || e.ReadOnly != "" {
		return st, false, nil
	}
	now := e.Now()
	// An expired signature, or one that never expires, is not renewed: a
	// server serving one was told to (--allow-expired), and signing it
	// again would vouch afresh for what may be an old copy put back. The
	// curator signs it with 3gs sign.
	if !st.Verified || st.Stale(now) != nil || st.Expires.Sub(now) > e.validity(st)/2 {
		return st, false, nil
	}
	if err := e.CheckBase(reg); err != nil {
		return st, false, err
	}
	head := st.Log
	if head == nil && e.log != nil && e.log.Log != nil && e.log.Last() != nil && e.log.Last().After == reg.SHA256() {
		h := e.log.Head()
		head = &h
	}
	// Only the signature changes, so only it is written: rewriting the
	// registry too could undo a hand edit made since CheckBase.
	done, err := Commit{Path: e.Path, Head: head, Key: e.Key, Now: now, Expires: now.Add(e.validity(st)), Base: reg.Bytes()}.Commit()
	if err != nil {
		return st, false, fmt.Errorf("signing %s again before it expires: %w", e.Path, err)
	}
	return signature.Check(reg, done.Signature), true, nil
}

// Reload opens the audit log against the registry reg (its bytes data,
// its signature status st) that reload_registry is about to serve, and
// keeps it. A registry the log does not record (changed outside it) is
// recorded now as a reload by caller, and, with the curator key, signed
// again so the signature covers the new head; a server without the key
// refuses that for a signed log. A read-only server records nothing. It
// returns the signature status to serve. orig, when set, is what the file
// held before the server gave data a new version: the file is rewritten
// with data, and its signature, only if it still holds orig.
func (e *Editor) Reload(now time.Time, caller string, reg *registry.Registry, data, orig []byte, st signature.Status) (signature.Status, error) {
	l, st, err := e.reloadLog(now, caller, reg, data, orig, st)
	if err == nil {
		e.log = l
	}
	return st, err
}

func (e *Editor) reloadLog(now time.Time, caller string, reg *registry.Registry, data, orig []byte, st signature.Status) (*Log, signature.Status, error) {
	writable := e.ReadOnly == ""
	l, _, err := e.openLog(reg, st, writable)
	if err != nil || !l.Unrecorded || !writable || l.Log == nil {
		return l, st, err
	}
	if l.Signed() && e.Key == nil {
		return nil, st, fmt.Errorf("%s is not the registry the signed audit log %s last recorded: it was changed outside the log, and this server has no curator key to record that. The curator signs the file with 3gs sign, which records it", e.Path, e.AuditLog)
	}
	if caller == "" {
		caller = Actor
	}
	entries := CatchUp(l.Last(), gen.AuditActionReload, now, reg)
	entries[len(entries)-1].Actor = caller
	c := Commit{Path: e.Path, Log: l.Log, Entries: entries, Key: e.Key, Now: now, Expires: now.Add(e.validity(st)), Limit: e.MaxRegistryBytes}
	switch {
	case e.Key == nil:
		// Recorded only: there is nothing to sign with.
	case orig == nil:
		// Only the signature is written: the registry's bytes are the
		// file's, and rewriting it could undo an edit made since it was
		// read.
		c.Base = data
	default:
		// The new version replaces the file only if no one edited it
		// again since it was read.
		c.Data, c.Base = data, orig
	}
	done, err := c.Commit()
	if err != nil {
		return nil, st, reloadFailed(e.Path, orig, err)
	}
	l.Served = done.Head
	if e.Key != nil {
		st = signature.Check(reg, done.Signature)
	}
	return l, st, nil
}

// reloadFailed words a failed Commit of Reload's.
func reloadFailed(path string, orig []byte, err error) error {
	var ce *Error
	if !errors.As(err, &ce) || ce.InLog {
		return err
	}
	err = ce.Err
	if errors.Is(err, ErrChanged) {
		err = fmt.Errorf("%s changed again while it was being reloaded; call reload_registry once the edit is finished", path)
	}
	if ce.UndoErr != nil {
		err = fmt.Errorf("%w; and its audit log entry could not be taken back (%v), so the next start refuses the log until it is", err, ce.UndoErr)
	}
	switch {
	case orig == nil:
		return fmt.Errorf("signing %s again to cover the new audit log head: %w", path, err)
	case errors.Is(ce.Err, ErrChanged):
		return err
	}
	return fmt.Errorf("writing %s with its new version and signature: %w", path, err)
}
