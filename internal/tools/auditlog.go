package tools

import (
	"errors"
	"fmt"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/registry"
)

// The audit log (internal/auditlog) records every change the editor
// makes. The editor opens it once, against the registry it serves: the
// log must verify under the curator key the registry names, and end at
// the head the registry's signature covers. What a crash can leave (a torn
// last line, entries after the signed head that the registry never took)
// is cut, and said so; anything else is refused, naming the seq.

// Actor is the name entries made by 3gs itself, or by a caller without a
// token (stdio), carry.
const Actor = "cli"

// LogNotes are the repairs OpenAuditLog made, for the caller to log.
type LogNotes []string

// OpenAuditLog checks the audit log of a server about to start editing
// the registry it serves (see openLog). Serve calls it before serving, so
// a log that does not verify stops the server rather than its first
// change.
func (h *Handlers) OpenAuditLog() (LogNotes, error) {
	if h.edit == nil {
		return nil, nil
	}
	e := h.edit
	e.mu.Lock()
	defer e.mu.Unlock()
	l, notes, err := e.openLog(h.cur.Load(), e.ReadOnly == "")
	if err == nil {
		e.log = l
	}
	return notes, err
}

// openLog reads and checks the audit log against snapshot s and returns
// it open for appending. With repair, it cuts what an interrupted write
// left; without (a read-only server, which must not write), it only
// checks, and returns a log that cannot be appended to when something was
// left (nil). The caller holds the editor's lock.
func (e *editor) openLog(s *snapshot, repair bool) (*openedLog, LogNotes, error) {
	path := e.AuditLog
	pub, _ := s.reg.CuratorKey()
	var covered *auditlog.Head
	if s.signature.Verified {
		covered = s.signature.Log
	}
	o := auditlog.Options{Key: pub}
	if covered != nil {
		o.Mark = covered.Seq
	}
	rep, err := auditlog.Read(path, o)
	if err != nil {
		return nil, nil, logProblem(path, err)
	}
	if rep.Signed() && s.signature.Verified && covered == nil {
		// Whoever holds the key signs with the head since the log was
		// signed; a signature without one is older than the log, put back.
		return nil, nil, fmt.Errorf("the audit log %s is signed by the curator, but the registry's signature names no log head: it is older than the log (an old signed copy put back, or one signed by a 3gs before logs were signed). Put the newest registry and signature back, or, if this registry is the curator's, sign it again with 3gs sign, which records it in the log", path)
	}
	var (
		notes LogNotes
		fit   *auditlog.Fit
	)
	if repair {
		rep, fit, notes, err = auditlog.Repair(path, rep, o, s.reg.SHA256(), covered)
	} else {
		fit, err = auditlog.Match(rep, s.reg.SHA256(), covered)
	}
	switch {
	case errors.Is(err, auditlog.ErrRepair):
		return nil, notes, err
	case err != nil:
		return nil, notes, logProblem(path, err)
	}
	l := &openedLog{served: servedHead(rep, covered), unrecorded: fit.Unrecorded}
	if rep.Torn == 0 && (fit.Pending == 0 || repair) {
		// Otherwise this is a read-only server reading a log another
		// process writes: it serves up to the head the registry's
		// signature covers, and appends nothing.
		l.Log = auditlog.Open(path, rep)
	}
	return l, notes, nil
}

// openedLog is the audit log as the editor holds it.
type openedLog struct {
	// Log appends; nil when this server may not (see openLog).
	*auditlog.Log
	// served is the head /audit serves up to.
	served auditlog.Head
	// unrecorded: the served registry is not the one the log's last
	// entry produced (see auditlog.Fit).
	unrecorded bool
}

// servedHead is the head /audit and get_audit_log serve up to: the one
// the registry's signature covers, or else the log's last entry.
func servedHead(rep *auditlog.Report, covered *auditlog.Head) auditlog.Head {
	if covered != nil {
		return *covered
	}
	return rep.Head
}

// logProblem says what is wrong with the audit log at path and how to
// fix it.
func logProblem(path string, err error) error {
	var p *auditlog.Problem
	switch {
	case errors.Is(err, auditlog.ErrLegacy):
		return fmt.Errorf("the audit log %s is %w. Run 3gs audit migrate --key-file KEY %s to keep it as %s.v1 and start a signed log that records its digest, or name a new file with --audit-log", path, err, registryOfLog(path), path)
	case errors.Is(err, auditlog.ErrMissing):
		return fmt.Errorf("the audit log %s cannot be read: %w. To fix: %s", path, err, auditlog.MissingFix(path, registryOfLog(path)))
	case errors.As(err, &p):
		return fmt.Errorf("the audit log %s does not verify at %w. Nothing was changed. 3gs audit verify shows the whole log; restore it from a backup, or, to start a new log and lose the old one's history, move it aside", path, err)
	}
	return fmt.Errorf("the audit log %s cannot be read: %w", path, err)
}

// registryOfLog guesses the registry a log at path belongs to, for hints.
func registryOfLog(path string) string {
	const suffix = ".audit.jsonl"
	if len(path) > len(suffix) && path[len(path)-len(suffix):] == suffix {
		return path[:len(path)-len(suffix)]
	}
	return "REGISTRY"
}

// actions maps the tools that change the registry to their log action.
var actions = map[string]gen.AuditentryAction{
	gen.ToolUpsertCategory: gen.AuditentryActionUpsert,
	gen.ToolRemoveCategory: gen.AuditentryActionRemove,
	gen.ToolReloadRegistry: gen.AuditentryActionReload,
}

// record appends the entries for a change from old (the registry served)
// to next made by caller through tool, preceded by the entries the log
// needs to reach old: a start entry for a new log, a reload entry when old
// was changed outside the log. It returns the new head and an undo that
// cuts them off again, for a change that fails after the log was written.
// The caller holds the editor's lock.
func (h *Handlers) record(now time.Time, caller, tool, slug string, old, next *registry.Registry) (auditlog.Head, func() error, error) {
	e := h.edit
	if e.log == nil {
		l, _, err := e.openLog(h.cur.Load(), true)
		if err != nil {
			return auditlog.Head{}, nil, err
		}
		e.log = l
	}
	if e.log.Log == nil {
		return auditlog.Head{}, nil, errors.New("the audit log " + e.AuditLog + " holds what an interrupted write left, and this server did not repair it because it started read-only; restart it")
	}
	if e.log.Signed() && e.Key == nil {
		return auditlog.Head{}, nil, fmt.Errorf("the audit log %s is signed by the curator key, and this server does not hold it, so it could not record the change. Start the server with --key-file (or PKARR_SECRET_KEY) to edit here", e.AuditLog)
	}
	if caller == "" {
		caller = Actor
	}
	stamp := now.UTC().Format(time.RFC3339Nano)
	entries := catchUp(e.log.Log, stamp, old)
	if next != nil {
		before := old.SHA256()
		c := &gen.Auditentry{Time: stamp, Action: actions[tool], Actor: caller, Version: next.Version(), Before: &before, After: next.SHA256()}
		if slug != "" {
			c.Slug = &slug
		}
		entries = append(entries, c)
	}
	if len(entries) == 0 {
		return e.log.Head(), func() error { return nil }, nil
	}
	undo := e.log.Checkpoint()
	head, err := e.log.Append(e.Key, entries...)
	if err != nil {
		return head, nil, err
	}
	return head, undo, nil
}

// catchUp returns the entries that bring log to the registry reg (see
// auditlog.CatchUp); a change found outside the log is recorded as a reload.
func catchUp(log *auditlog.Log, stamp string, reg *registry.Registry) []*gen.Auditentry {
	return auditlog.CatchUp(log.Last(), gen.AuditentryActionReload, stamp, Actor, reg.Version(), reg.SHA256())
}
