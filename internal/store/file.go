package store

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// File is a registry file a command changes or signs with the curator
// key: 3gs sign, endorse, proposals accept, check --apply-redirects
// (each through internal/curation's Node) and audit migrate. The command
// holds the registry's lock (internal/safefile) for as long as it uses
// File, and reads the registry under it.
type File struct {
	// Path is the registry file; LogPath its audit log.
	Path, LogPath string
	// Key is the curator's; nil writes a change unsigned and unrecorded
	// (Change only).
	Key ed25519.PrivateKey
	// Validity is how long the new signature vouches for the registry.
	Validity time.Duration
	// Limit is the largest registry the command reads.
	Limit int64
	// Notes, when set, gets one sentence per repair made to the log.
	Notes func(string)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Actor and Slug, when set, are the actor and category of Change's
	// log entry (an accepted proposal names itself); empty: cli, none.
	Actor, Slug string
	// Detail, when set, says in the log entry what the change was, where
	// the action alone does not (the redirects 3gs check applied).
	Detail string
	// Describe, when set, is called once the edit has run and says what
	// it did, in place of Detail (what an endorsement did is known only
	// once the registry has been read).
	Describe func() string
}

// LogError is an audit log that cannot be opened to sign with or to
// record a change in: Path is the log, Err auditlog's (a
// *auditlog.Problem, ErrLegacy, ErrMissing, ErrRepair). The commands and
// tools word it, each naming what fixes it there (RegistryOf names the
// registry a hint is about).
type LogError struct {
	Path string
	Err  error
}

func (e *LogError) Error() string { return "the audit log " + e.Path + ": " + e.Err.Error() }
func (e *LogError) Unwrap() error { return e.Err }

func (f File) now() time.Time {
	if f.Now == nil {
		return time.Now()
	}
	return f.Now()
}

// openLog reads the log of reg, which f is about to sign, and returns it
// open for appending, having repaired what a crash can leave, as a
// starting server does.
func (f File) openLog(reg *registry.Registry) (*auditlog.Log, error) {
	pub := curatorkey.Public(f.Key)
	l, notes, err := OpenLog(LogOptions{Path: f.LogPath, Key: pub, SHA256: reg.SHA256(), Covered: CoveredHead(f.Path, reg, pub), Repair: true})
	if f.Notes != nil {
		for _, n := range notes {
			f.Notes(n)
		}
	}
	if err != nil {
		return nil, &LogError{Path: f.LogPath, Err: err}
	}
	return l.Log, nil
}

// Signed is what Sign did.
type Signed struct {
	// Old is the registry as read; Reg as signed (another version when
	// Sign raised it).
	Old, Reg *registry.Registry
	// Entries were appended to the log; none when it already recorded Reg.
	Entries []*gen.AuditEntry
	Head    auditlog.Head
	// Expires is when the signature stops vouching, as written.
	Expires time.Time
}

// VersionError refuses to sign a registry edited since the log last
// recorded version Last: raising its version failed (Err), or it is older
// than Last (Err nil).
type VersionError struct {
	Last string
	Err  error
}

func (e *VersionError) Error() string {
	if e.Err == nil {
		return "the registry is older than version " + e.Last + ", which the audit log last recorded"
	}
	return fmt.Sprintf("raising the version of a registry changed since the audit log recorded version %s: %v", e.Last, e.Err)
}

// Sign signs reg, the registry at f.Path, recording it in the log first
// when the log does not already end at it. Replicas and peers refuse a
// version they have seen with other bytes, and an older one: a registry
// edited since the log last recorded it gets the next patch version, as
// the curator tools' changes do.
func (f File) Sign(reg *registry.Registry) (*Signed, error) {
	l, err := f.openLog(reg)
	if err != nil {
		return nil, err
	}
	s := &Signed{Old: reg, Reg: reg}
	if last := l.Last(); last != nil && last.After != reg.SHA256() {
		switch registry.CompareVersions(reg.Version(), last.Version) {
		case 0:
			if s.Reg, err = reg.WithVersion(registry.BumpPatch(reg.Version()), f.Limit); err != nil {
				return nil, &VersionError{Last: last.Version, Err: err}
			}
		case -1:
			return nil, &VersionError{Last: last.Version}
		}
	}
	now := f.now()
	s.Entries = CatchUp(l.Last(), gen.AuditActionSign, now, s.Reg)
	head := l.Head()
	c := Commit{Path: f.Path, Log: l, Entries: s.Entries, Head: &head, Key: f.Key, Now: now, Expires: now.Add(f.Validity), Base: reg.Bytes(), Limit: f.Limit}
	if s.Reg != reg {
		// The new version's bytes and their signature, written together.
		c.Data = s.Reg.Bytes()
	}
	done, err := c.Commit()
	if err != nil {
		return nil, err
	}
	s.Head, s.Expires = done.Head, c.Expires.UTC().Truncate(time.Second)
	return s, nil
}

// InvalidError is a change after which the registry would not load.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// Changed is what Change did.
type Changed struct {
	// Old is the registry as read; Next as written.
	Old, Next *registry.Registry
	// Head is the log entry that records the change (zero when unsigned).
	Head auditlog.Head
}

// Change edits reg, the registry at f.Path, as edit says, then stamps the
// day, raises the patch version (unless keepVersion), checks the whole
// registry, records the change in the log as action, writes it and, with
// f.Key, signs it; on failure nothing is changed (see Commit). Without a
// key the registry is written alone, unrecorded, for the curator to sign
// later with 3gs sign. Errors: edit's own, *InvalidError, *LogError and
// *Error.
func (f File) Change(reg *registry.Registry, action gen.AuditAction, keepVersion bool, edit func(*gen.Registry) error) (*Changed, error) {
	return f.ChangeCategory(reg, action, "", keepVersion, edit)
}

// ChangeCategory is Change for a change to one category, whose slug the
// log entry names.
func (f File) ChangeCategory(reg *registry.Registry, action gen.AuditAction, slug string, keepVersion bool, edit func(*gen.Registry) error) (*Changed, error) {
	doc := reg.Document()
	if err := edit(&doc); err != nil {
		return nil, err
	}
	now := f.now()
	doc.Updated = now.UTC().Format(time.DateOnly)
	if !keepVersion {
		doc.Version = registry.BumpPatch(doc.Version)
	}
	data := gen.EncodeRegistry(&doc) // schema order, so the file's diff is the change
	next, err := registry.LoadLimit(data, f.Limit)
	if err != nil {
		return nil, &InvalidError{err}
	}
	c := Commit{Path: f.Path, Key: f.Key, Now: now, Expires: now.Add(f.Validity), Data: data, Base: reg.Bytes(), Limit: f.Limit}
	if f.Key != nil {
		if c.Log, err = f.openLog(reg); err != nil {
			return nil, err
		}
		e := Entry(now, action, f.Actor, slug, reg, next)
		detail := f.Detail
		if f.Describe != nil {
			detail = f.Describe()
		}
		if detail != "" {
			e.Detail = &detail
		}
		c.Entries = append(CatchUp(c.Log.Last(), gen.AuditActionSign, now, reg), e)
	}
	done, err := c.Commit()
	if err != nil {
		return nil, err
	}
	return &Changed{Old: reg, Next: next, Head: done.Head}, nil
}

// Init writes a new registry (data) at path, with a new audit log at
// logPath whose start entry records it, signed with key for validity.
// Nothing is taken back on failure: the caller made the folder.
func Init(path, logPath string, data []byte, key ed25519.PrivateKey, now time.Time, validity time.Duration) (auditlog.Head, error) {
	reg, err := registry.Load(data)
	if err != nil {
		return auditlog.Head{}, &InvalidError{err}
	}
	done, err := Commit{
		Path: path, Log: auditlog.Open(logPath, &auditlog.Report{}), Entries: CatchUp(nil, gen.AuditActionStart, now, reg),
		Key: key, Now: now, Expires: now.Add(validity), Data: data,
	}.Commit()
	return done.Head, err
}

// MigrateError is a migration that failed after the old log was moved
// aside: Restored says whether it is back in place, RestoreErr why not.
type MigrateError struct {
	Err        error
	Moved      bool
	RestoreErr error
}

func (e *MigrateError) Error() string { return e.Err.Error() }
func (e *MigrateError) Unwrap() error { return e.Err }

// Migrate replaces the log of the old unsigned format at f.LogPath with a
// signed one whose start entry records reg and the old file's digest: the
// old log becomes LOG.v1, the new one starts, and reg is signed again to
// cover it. A failure puts the old log back, so the registry is never left
// with neither.
func (f File) Migrate(reg *registry.Registry, digest string) (*Signed, error) {
	oldPath := f.LogPath + ".v1"
	if err := os.Rename(f.LogPath, oldPath); err != nil {
		return nil, &MigrateError{Err: err}
	}
	now := f.now()
	start := CatchUp(nil, gen.AuditActionSign, now, reg)[0]
	start.LegacyLogSHA256 = &digest
	c := Commit{Path: f.Path, Log: auditlog.Open(f.LogPath, &auditlog.Report{}), Entries: []*gen.AuditEntry{start}, Key: f.Key, Now: now, Expires: now.Add(f.Validity), Base: reg.Bytes()}
	done, err := c.Commit()
	if err != nil {
		var e *Error
		if errors.As(err, &e) && !e.InLog {
			err = fmt.Errorf("cannot write %s: %w", f.Path+signature.Suffix, e.Err)
		}
		m := &MigrateError{Err: err, Moved: true}
		os.Remove(f.LogPath)
		m.RestoreErr = os.Rename(oldPath, f.LogPath)
		return nil, m
	}
	return &Signed{Old: reg, Reg: reg, Entries: c.Entries, Head: done.Head, Expires: c.Expires.UTC().Truncate(time.Second)}, nil
}

// RegistryOf guesses the registry a log at path belongs to, for hints:
// the path without ".audit.jsonl", or REGISTRY.
func RegistryOf(logPath string) string {
	if reg, ok := strings.CutSuffix(logPath, ".audit.jsonl"); ok && reg != "" {
		return reg
	}
	return "REGISTRY"
}
