package tools

import (
	"github.com/three-good-sources/3gs/gen"
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
// the registry it serves (store.Editor.Open). Serve calls it before
// serving, so a log that does not verify stops the server rather than its
// first change.
func (h *Handlers) OpenAuditLog() (LogNotes, error) {
	if h.edit == nil {
		return nil, nil
	}
	e := h.edit
	e.Lock()
	defer e.Unlock()
	return e.Open(h.cur.Load().served())
}

// actions maps the tools that change the registry to their log action.
var actions = map[string]gen.AuditAction{
	gen.ToolUpsertCategory: gen.AuditActionUpsert,
	gen.ToolRemoveCategory: gen.AuditActionRemove,
	gen.ToolReloadRegistry: gen.AuditActionReload,
}
