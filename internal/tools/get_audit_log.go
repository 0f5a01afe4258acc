package tools

import (
	"time"

	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/store"
)

// ErrNoAuditLog is what AuditPage and AuditHead return on a server that
// keeps no audit log: one serving the registry built into 3gs, which has no
// file and so never changes.
var ErrNoAuditLog = fmt.Errorf("%w: it serves the registry built into 3gs, which has no file", auditlog.ErrNoLog)

// AuditHead returns the head the audit log is served up to (see
// servedHead) and the registry served with it. Both are read under the
// curation node's lock, which every change holds while it moves the one
// and publishes the other, so they always belong together.
func (h *Handlers) AuditHead() (auditlog.Head, store.Served, error) {
	_, head, reg, err := h.auditServed()
	return head, reg, err
}

// AuditPage returns the entries of the audit log that q selects, up to the
// served head. It is what get_audit_log and GET /audit both answer from.
// It reads through the log's index, so a page costs the lines it returns,
// not a pass over the log: a filtered query for a slug the log lacks is a
// map lookup.
//
// The lock is held only to learn the path and the head: reading the file
// then needs none, because the editor only ever appends after the served
// head (and cuts back only what it appended after it), so the lines up to
// it stay as they are while a change runs.
func (h *Handlers) AuditPage(q auditlog.Query) (*auditlog.Page, error) {
	path, head, _, err := h.auditServed()
	if err != nil {
		return nil, err
	}
	p, err := h.auditIndex.ReadPage(path, q, head.Seq)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log %s: %w", path, err)
	}
	if p.Head != head {
		// The file was replaced since the server verified it; serving it
		// would hand out entries nobody checked.
		return nil, fmt.Errorf("the audit log %s no longer holds the entry the server verified at seq %d (its line hashes to %.16s…, not %.16s…): it was rewritten underneath the server; 3gs audit verify says where", path, head.Seq, p.Head.Hash, head.Hash)
	}
	return p, nil
}

// auditServed reads together (curation.Node.AuditHead) the log's path, the head
// served and the registry served. A server that never opened its log
// (Serve opens it before serving; tests and embedders may not) opens it
// here, as its first change would.
func (h *Handlers) auditServed() (string, auditlog.Head, store.Served, error) {
	if h.node == nil && h.origin != "" {
		return h.mirrorServed()
	}
	if h.node == nil {
		return "", auditlog.Head{}, store.Served{}, ErrNoAuditLog
	}
	path, head, served, err := h.node.AuditHead()
	if err != nil {
		return "", auditlog.Head{}, store.Served{}, &wordedError{err}
	}
	if h.expiry {
		served.Signature = served.Signature.At(h.now())
	}
	return path, head, served, nil
}

// AuditMirror is a read replica's verified copy of its origin's audit
// log (follow.Mirror): its file, which only grows while a head is
// served from it, and the last entry it holds.
type AuditMirror interface {
	Mirrored() (path string, head auditlog.Head)
}

// mirrorServed is auditServed on a read replica: its mirror of the
// origin's log, served up to the head the signature of the copy it serves
// covers, once the mirror has reached it. Until then (or with no mirror)
// the origin keeps the log.
func (h *Handlers) mirrorServed() (string, auditlog.Head, store.Served, error) {
	reg := h.Published()
	elsewhere := fmt.Sprintf("this node is a read replica of %s, which keeps the log (GET %s/audit, or its get_audit_log)", h.origin, h.origin)
	if h.mirror == nil {
		return "", auditlog.Head{}, store.Served{}, fmt.Errorf("%w: %s", auditlog.ErrNoLog, elsewhere)
	}
	want := reg.Signature.Log
	if want == nil {
		return "", auditlog.Head{}, store.Served{}, fmt.Errorf("%w: the origin's signature covers no audit log head, so this read replica has no log to serve", auditlog.ErrNoLog)
	}
	path, held := h.mirror.Mirrored()
	if held.Seq < want.Seq {
		return "", auditlog.Head{}, store.Served{}, fmt.Errorf("%w: its copy of the origin's log has not yet reached seq %d, the head the registry served covers; %s", auditlog.ErrNoLog, want.Seq, elsewhere)
	}
	return path, *want, reg, nil
}

// noAuditLog is get_audit_log's answer on a server without a log.
const noAuditLog = "This server serves the registry built into 3gs, which has no audit log: it has no file, so nothing ever changed it. A server started with --registry PATH keeps the log of its registry's changes."

// GetAuditLog implements gen.ToolHandlers.
func (h *Handlers) GetAuditLog(_ context.Context, in *gen.GetAuditLogInput) (*gen.GetAuditLogOutput, error) {
	out := &gen.GetAuditLogOutput{Entries: []gen.AuditEntry{}}
	if in == nil {
		in = &gen.GetAuditLogInput{}
	}
	q := auditlog.Query{Since: deref(in.Since), Slug: deref(in.Slug), Action: string(deref(in.Action)), Limit: auditlog.DefaultPage}
	if in.Limit != nil {
		q.Limit = *in.Limit
	}
	p, err := h.AuditPage(q)
	if errors.Is(err, ErrNoAuditLog) {
		return nil, &gen.ToolError{Text: noAuditLog, Structured: out}
	}
	if errors.Is(err, auditlog.ErrNoLog) {
		return nil, &gen.ToolError{Text: "This server keeps no audit log: " + err.Error() + ".", Structured: out}
	}
	if err != nil {
		// The server's own file is at fault, not the call: the caller gets
		// an internal error and the operator the details in the log.
		return nil, err
	}
	out.Head.Seq = p.Head.Seq
	if p.Head.Seq > 0 {
		out.Head.Hash = ptr(p.Head.Hash)
	}
	if p.Next > 0 {
		out.NextSince = ptr(p.Next)
	}
	for _, e := range p.Entries {
		out.Entries = append(out.Entries, *e)
	}
	return out, nil
}

// GetAuditLogText implements gen.ToolHandlers: one line per entry, with the
// digests shortened, since the structured content carries them whole.
func (h *Handlers) GetAuditLogText(out *gen.GetAuditLogOutput) string {
	var b strings.Builder
	switch {
	case out.Head.Seq == 0:
		return "The audit log is empty: no change to this registry has been recorded yet."
	case len(out.Entries) == 0:
		fmt.Fprintf(&b, "No entries match, up to seq %d (the head served, %.12s…).", out.Head.Seq, deref(out.Head.Hash))
		return b.String()
	}
	fmt.Fprintf(&b, "Audit log: %d entries, seq %d to %d (the log is served up to seq %d, %.12s…):\n", len(out.Entries), out.Entries[0].Seq, out.Entries[len(out.Entries)-1].Seq, out.Head.Seq, deref(out.Head.Hash))
	for _, e := range out.Entries {
		fmt.Fprintf(&b, "- seq %d, %s, %s", e.Seq, e.Time.UTC().Format(time.RFC3339Nano), e.Action)
		if e.Slug != nil {
			fmt.Fprintf(&b, " %s", *e.Slug)
		}
		fmt.Fprintf(&b, " by %s: version %s, sha256 ", oneLine(e.Actor, 64), oneLine(e.Version, 64))
		if e.Before != nil {
			fmt.Fprintf(&b, "%.12s… -> ", *e.Before)
		}
		fmt.Fprintf(&b, "%.12s…", e.After)
		if e.Signature != nil {
			b.WriteString(", signed")
		} else {
			b.WriteString(", unsigned")
		}
		if e.Detail != nil {
			fmt.Fprintf(&b, " (%s)", oneLine(*e.Detail, 1000))
		}
		b.WriteByte('\n')
	}
	if out.NextSince != nil {
		fmt.Fprintf(&b, "More follow: call get_audit_log with since %d (and the same slug and action).\n", *out.NextSince)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
