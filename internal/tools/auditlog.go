package tools

import (
	"errors"
	"fmt"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/store"
)

// The audit log (internal/auditlog) records every change the editor
// makes. The editor opens it once, against the registry it serves: the
// log must verify under the curator key the registry names, and end at
// the head the registry's signature covers. What a crash can leave (a torn
// last line, entries after the signed head that the registry never took)
// is cut, and said so; anything else is refused, naming the seq.

// Actor is the name entries made by 3gs itself, or by a caller without a
// token (stdio), carry.
const Actor = store.Actor

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
// it open for appending (store.OpenLog). With repair, it cuts what an
// interrupted write left; without (a read-only server, which must not
// write), it only checks, and returns a log that cannot be appended to
// when something was left (nil). The caller holds the editor's lock.
func (e *editor) openLog(s *snapshot, repair bool) (*store.Log, LogNotes, error) {
	path := e.AuditLog
	pub, _ := s.reg.CuratorKey()
	o := store.LogOptions{Path: path, Key: pub, SHA256: s.reg.SHA256(), Repair: repair, NeedCovered: s.signature.Verified}
	if s.signature.Verified {
		o.Covered = s.signature.Log
	}
	l, notes, err := store.OpenLog(o)
	switch {
	case errors.Is(err, store.ErrUncovered):
		// Whoever holds the key signs with the head since the log was
		// signed; a signature without one is older than the log, put back.
		return nil, nil, fmt.Errorf("the audit log %s is signed by the curator, but the registry's signature names no log head: it is older than the log (an old signed copy put back, or one signed by a 3gs before logs were signed). Put the newest registry and signature back, or, if this registry is the curator's, sign it again with 3gs sign, which records it in the log", path)
	case errors.Is(err, auditlog.ErrRepair):
		return nil, notes, err
	case err != nil:
		return nil, notes, logProblem(path, err)
	}
	return l, notes, nil
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

// record returns the log and the entries for a change from old (the
// registry served) to next made by caller through tool, preceded by the
// entries the log needs to reach old: a start entry for a new log, a
// reload entry when old was changed outside the log. The caller commits
// them (store.Commit) and holds the editor's lock.
func (h *Handlers) record(now time.Time, caller, tool, slug string, old, next *registry.Registry) (*auditlog.Log, []*gen.Auditentry, error) {
	e := h.edit
	if e.log == nil {
		l, _, err := e.openLog(h.cur.Load(), true)
		if err != nil {
			return nil, nil, err
		}
		e.log = l
	}
	if e.log.Log == nil {
		return nil, nil, errors.New("the audit log " + e.AuditLog + " holds what an interrupted write left, and this server did not repair it because it started read-only; restart it")
	}
	if e.log.Signed() && e.Key == nil {
		return nil, nil, fmt.Errorf("the audit log %s is signed by the curator key, and this server does not hold it, so it could not record the change. Start the server with --key-file (or PKARR_SECRET_KEY) to edit here", e.AuditLog)
	}
	entries := store.CatchUp(e.log.Last(), gen.AuditentryActionReload, now, old)
	if next != nil {
		entries = append(entries, store.Entry(now, actions[tool], caller, slug, old, next))
	}
	return e.log.Log, entries, nil
}
