// Package tools is the logic of the registry tools: it implements the
// gen.ToolHandlers interface that the schemas under schema/tools/ declare,
// over one immutable registry snapshot and its matcher.
//
// Each tool is one file named after it (get_sources.go for
// schema/tools/get_sources.json), holding its two methods and whatever
// only it uses. What several tools share is in handlers.go (the snapshot
// and configuration, and how internal/curation reads and swaps it),
// editor.go and auditlog.go (how the curator tools word what
// internal/curation and internal/store answer). A curator tool decodes
// its arguments, calls one internal/curation function, which records,
// writes, signs and publishes the change, and words the result.
package tools

import (
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/curatorlinks"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
	"github.com/three-good-sources/3gs/internal/store"
)

// DefaultThreshold is the lowest match score get_sources accepts when
// neither the server (MATCH_THRESHOLD) nor the call sets one.
const DefaultThreshold = 0.4

// Handlers serves the tools. What they read is one immutable snapshot,
// swapped whole when an admin tool changes the registry, so a request that
// started on the old registry finishes on it and no request sees half a
// change.
type Handlers struct {
	cur       atomic.Pointer[snapshot]
	expiry    bool // Config.EnforceExpiry
	threshold float64
	// node changes the registry file (internal/curation); nil when the
	// registry has no file to write.
	node *curation.Node
	// newMatcher builds the matcher of each registry node publishes.
	newMatcher func(*registry.Registry) matcher.Matcher
	qlog       Recorder // nil: no query log
	now        func() time.Time
	peers      *peer.Network // nil: endorsed curators are not fetched
	origin     string        // a read replica's origin; "" otherwise
	mirror     AuditMirror   // a read replica's copy of the origin's log; nil: none
	// auditIndex finds the audit log's entries for AuditPage without
	// reading the whole file on every page.
	auditIndex auditlog.Index
	// health is what the last check of the sources found (SetSourceHealth);
	// nil when none is known.
	health atomic.Pointer[sourcehealth.Index]
	// props takes proposals (SetProposals); nil when this server takes none.
	props *proposalDesk
	// identities is what the checks of curators' links found
	// (SetIdentities); nil: every link is pending.
	identities atomic.Pointer[curatorlinks.Checker]
	// onPublish, when set (OnPublish), runs after each new snapshot is
	// published.
	onPublish atomic.Pointer[func()]
}

var _ gen.ToolHandlers = (*Handlers)(nil)

// snapshot is a registry with everything derived from it.
type snapshot struct {
	reg       *registry.Registry
	matcher   matcher.Matcher
	signature signature.Status
	files     signature.Files
	slugs     []string // sorted, for no-match answers
	// visible: registry.Visible changes no category's name nor the first
	// line of its description (the loader refuses what it would drop, so
	// it is so unless that check was bypassed), so a listing shows them
	// as they are instead of passing each through it on every answer.
	visible bool
	// lineBytes are the average bytes of a listing's line by slug and
	// name, and by slug alone (shelf.lineBytes).
	lineBytes [2]int
	// index finds a category by slug for the listings (shelf.index).
	index *slugIndex
	// modified is when these bytes became the registry: the file's
	// modification time, or the moment a change was written.
	modified time.Time
}

func newSnapshot(reg *registry.Registry, m matcher.Matcher, st signature.Status, files signature.Files, modified time.Time) *snapshot {
	s := &snapshot{reg: reg, matcher: m, signature: st, files: files, modified: modified}
	s.visible = true
	var named, slugs int
	for _, cat := range reg.Categories() {
		s.slugs = append(s.slugs, cat.Slug)
		s.visible = s.visible && registry.Visible(cat.Name) == cat.Name && registry.Visible(firstLine(cat.Description)) == firstLine(cat.Description)
		named += len("\n- ") + len(cat.Slug) + len(": ") + len(cat.Name)
		slugs += len(", ") + len(cat.Slug)
	}
	s.index = newSlugIndex(reg.Categories())
	if n := len(s.slugs); n > 0 {
		s.lineBytes = [2]int{named / n, slugs / n}
	}
	return s
}

// served is s as the editor (store.Editor) sees it: the registry with the
// signature check made when it was loaded.
func (s *snapshot) served() store.Served {
	return store.Served{Registry: s.reg, Signature: s.signature, Modified: s.modified}
}

// Config is what the handlers serve.
type Config struct {
	Registry *registry.Registry
	Matcher  matcher.Matcher
	// Threshold is the server's default for get_sources.
	Threshold float64
	// Signature is the outcome of checking the registry's signature file;
	// the zero value means there is none.
	Signature signature.Status
	// Files names the registry and signature files in get_provenance's
	// verification steps.
	Files signature.Files
	// Edit, when set, lets the admin tools change the registry file.
	Edit *EditConfig
	// NewMatcher builds the matcher of each registry an admin tool
	// writes or reloads; nil means matcher.New.
	NewMatcher func(*registry.Registry) matcher.Matcher
	// Modified is when the registry's bytes were last changed (the file's
	// modification time); zero when unknown.
	Modified time.Time
	// QueryLog, when set, gets a line for every get_sources call that names
	// a query or a slug (3gs serve --query-log).
	QueryLog Recorder
	// Now is the clock for the query log; nil means time.Now.
	Now func() time.Time
	// Peers, when set, holds the verified registries of the curators the
	// registry endorses (get_federated_sources, get_endorsements).
	Peers *peer.Network
	// Origin, on a read replica (serve --follow), is the URL of the node
	// whose registry it serves: the curator tools answer that edits go
	// there.
	Origin string
	// AuditMirror, on a read replica that keeps one, is its verified copy
	// of the origin's audit log, which /audit and get_audit_log answer
	// from.
	AuditMirror AuditMirror
	// EnforceExpiry withholds the registry once its signature expires
	// while it is served (see expiry.go): set for a registry file and a
	// read replica's copy, unless --allow-expired; not for the registry
	// built into the binary, whose freshness is the binary's.
	EnforceExpiry bool
}

// Recorder keeps the query log (querylog.Log).
type Recorder interface {
	Record(*gen.QueryLog)
}

// New returns handlers for c.
func New(c Config) *Handlers {
	h := &Handlers{threshold: c.Threshold, qlog: c.QueryLog, now: c.Now, peers: c.Peers, origin: c.Origin, mirror: c.AuditMirror}
	h.expiry = c.EnforceExpiry
	if h.now == nil {
		h.now = time.Now
	}
	h.publish(newSnapshot(c.Registry, c.Matcher, c.Signature, c.Files, c.Modified))
	if c.Edit != nil {
		h.newMatcher = c.NewMatcher
		if h.newMatcher == nil {
			h.newMatcher = func(r *registry.Registry) matcher.Matcher { return matcher.New(r) }
		}
		h.node = curation.NewServer(*c.Edit, published{h})
	}
	return h
}

// published is what the handlers serve, as internal/curation reads and
// publishes it: a change's new registry gets its matcher here, a new
// signature of the same registry keeps the snapshot's.
type published struct{ h *Handlers }

func (s published) Current() store.Served { return s.h.cur.Load().served() }

func (s published) Publish(next store.Served) {
	old := s.h.cur.Load()
	if next.Registry == old.reg {
		n := *old
		n.signature = next.Signature
		s.h.publish(&n)
		return
	}
	s.h.publish(newSnapshot(next.Registry, s.h.newMatcher(next.Registry), next.Signature, old.files, next.Modified))
}

// publish makes s the snapshot every new request reads, and its
// endorsements the peers the network keeps. Endorsements are followed
// only from a registry whose own signature verified: an unsigned or
// tampered file cannot tell us whose registries to trust.
func (h *Handlers) publish(s *snapshot) {
	h.cur.Store(s)
	if f := h.onPublish.Load(); f != nil {
		defer (*f)()
	}
	if h.peers == nil {
		return
	}
	h.peers.SetOwnName(s.reg.Curator().Name)
	if !s.signature.Verified {
		h.peers.SetEndorsements(s.reg.Curator().Pubkey, nil)
		return
	}
	h.peers.SetEndorsements(s.reg.Curator().Pubkey, s.reg.Endorsements())
}

// OnPublish runs f after each registry (or signature) published from now
// on: a reload, an edit, a read replica's new copy. The MCP core reads
// again then what its tools/list and instructions depend on (Catalog,
// Federates).
func (h *Handlers) OnPublish(f func()) { h.onPublish.Store(&f) }

// Federates reports whether this node asks the curators its registry
// endorses (get_federated_sources): it has peers, and the registry served
// now endorses at least one curator.
func (h *Handlers) Federates() bool { return h.federates(h.cur.Load()) }

// Published returns the registry being served.
func (h *Handlers) Published() store.Served {
	s := h.cur.Load()
	return store.Served{Registry: s.reg, Signature: h.signatureNow(s), Modified: s.modified}
}

// fmtScore shows a score with two decimals, rounded down: 0.898 against a
// threshold of 0.9 must not read as "0.90".
func fmtScore(s float64) string {
	return strconv.FormatFloat(math.Floor(s*100+1e-9)/100, 'f', 2, 64)
}

// appendScore appends fmtScore(s) to dst.
func appendScore(dst []byte, s float64) []byte {
	return strconv.AppendFloat(dst, math.Floor(s*100+1e-9)/100, 'f', 2, 64)
}

func ptr[T any](v T) *T { return &v }

// second is a time as the tools' results give it: in UTC, to the second.
// A result's time.Time is written as RFC 3339, so this one reads
// 2026-11-21T09:30:00Z.
func second(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// timeText is a result's time as its text gives it: as the result's JSON
// writes it (RFC 3339); empty for none.
func timeText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Serve makes reg, with its signature document and matcher m, the
// registry served from now on: a read replica's new copy from its origin.
// Requests already running finish on the registry they started with.
func (h *Handlers) Serve(reg *registry.Registry, sig []byte, m matcher.Matcher, modified time.Time) {
	old := h.cur.Load()
	h.publish(newSnapshot(reg, m, signature.Check(reg, sig), old.files, modified))
}

// categories is "1 category" or "N categories".
func categories(n int) string {
	if n == 1 {
		return "1 category"
	}
	return strconv.Itoa(n) + " categories"
}

// Catalog is the registry served now, its version and every category's
// slug, when it holds at most max categories (max > 0): the server lists
// them in a session's instructions, so an agent may pass a slug on its
// first call. A no-match answer to a caller whose session was given this
// catalog (tooltable.WithCatalog with this version), as long as this
// registry is the one served, names the catalog instead of repeating it;
// after a reload or an edit it lists the categories again, since the
// session holds the older catalog.
func (h *Handlers) Catalog(max int) (version string, slugs []string, ok bool) {
	s := h.cur.Load()
	if max <= 0 || len(s.slugs) > max {
		return "", nil, false
	}
	return catalogVersion(s), s.slugs, true
}

// catalogVersion names s's registry in the catalog: its version, and the
// start of its digest, which changes with every edit even when the
// version does not.
func catalogVersion(s *snapshot) string {
	v := s.reg.Version()
	if d := s.reg.SHA256(); len(d) >= 8 {
		if v != "" {
			v += " "
		}
		v += "sha256:" + d[:8]
	}
	return v
}
