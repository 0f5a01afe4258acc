package httpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// Auditor reads the audit log of the registry served; *tools.Handlers is
// one. Both methods wrap auditlog.ErrNoLog when the server keeps no log.
type Auditor interface {
	// AuditPage returns the entries q selects, up to the served head.
	AuditPage(q auditlog.Query) (*auditlog.Page, error)
	// AuditHead returns the served head and the registry served with it.
	AuditHead() (auditlog.Head, store.Served, error)
}

// jsonlContentType is JSON Lines: one JSON text per line, each ended by a
// newline. application/jsonl is the name in use for it; nothing else in
// 3gs serves the format, so there was no existing spelling to follow.
var jsonlContentType = []string{"application/jsonl; charset=utf-8"}

// serveAudit answers GET /audit?since=N&slug=S&action=A&limit=L: the log's
// lines, byte for byte as stored, each followed by a newline, so a reader
// can hash them and check their signatures (3gs audit verify reads the
// same format). Audit-Next, when present, is the since of the next page.
// The ETag stands for the served head and the query: the log below the
// head never changes, so the same head and query always give the same
// body, and a client polling with If-None-Match is answered 304 without
// the log being read.
func (s *Server) serveAudit(w http.ResponseWriter, r *http.Request) {
	a, release, ok := s.auditor(w, r)
	if !ok {
		return
	}
	defer release()
	q, problem := auditQuery(r.URL.Query())
	if problem != "" {
		writeProblem(w, http.StatusBadRequest, problem)
		return
	}
	inm := r.Header.Get("If-None-Match")
	if inm != "" {
		if head, _, err := a.AuditHead(); err == nil && etagMatches(inm, auditETag(head, q)) {
			notModified(w, auditETag(head, q))
			return
		}
	}
	p, err := a.AuditPage(q)
	if err != nil {
		s.auditFailed(w, err)
		return
	}
	// The head may have moved since the check above: the tag sent is the
	// one of the page read, and a client that already holds it is still
	// answered 304.
	etag := auditETag(p.Head, q)
	if inm != "" && etagMatches(inm, etag) {
		notModified(w, etag)
		return
	}
	n := 0
	for _, l := range p.Lines {
		n += len(l) + 1
	}
	h := w.Header()
	h["Content-Type"] = jsonlContentType
	h["X-Content-Type-Options"] = noSniff
	h["Cache-Control"] = noCache
	h["Etag"] = []string{etag}
	h["Content-Length"] = []string{strconv.Itoa(n)}
	if p.Next > 0 {
		h["Audit-Next"] = []string{strconv.Itoa(p.Next)}
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	body := make([]byte, 0, n)
	for _, l := range p.Lines {
		body = append(append(body, l...), '\n')
	}
	w.Write(body)
}

// serveAuditHead answers GET /audit/head (schema/audithead.schema.json):
// the served head with the registry it belongs to, read together.
func (s *Server) serveAuditHead(w http.ResponseWriter, r *http.Request) {
	a, release, ok := s.auditor(w, r)
	if !ok {
		return
	}
	defer release()
	head, reg, err := a.AuditHead()
	if err != nil {
		s.auditFailed(w, err)
		return
	}
	doc := gen.AuditHead{Seq: head.Seq, RegistrySHA256: reg.Registry.SHA256(), RegistryVersion: reg.Registry.Version()}
	if head.Seq > 0 {
		doc.Hash = &head.Hash
	}
	writeJSON(w, http.StatusOK, gen.EncodeAuditHead(&doc))
}

// auditor is the log the audit endpoints read, and a place among the
// --max-concurrent audit requests, to release when done; it answers the
// request itself (405, 503 while loading or when every place is taken,
// 404 without a log) when there is none.
func (s *Server) auditor(w http.ResponseWriter, r *http.Request) (Auditor, func(), bool) {
	if !readOnly(w, r) {
		return nil, nil, false
	}
	b := s.backend.Load()
	switch {
	case b == nil:
		w.Header()["Retry-After"] = retryAfter
		writeProblem(w, http.StatusServiceUnavailable, "the registry is still loading; retry shortly")
		return nil, nil, false
	case b.Audit == nil:
		writeProblem(w, http.StatusNotFound, "this server serves no audit log")
		return nil, nil, false
	}
	select {
	case s.auditSlots <- struct{}{}:
		return b.Audit, func() { <-s.auditSlots }, true
	default:
		w.Header()["Retry-After"] = retryAfter
		writeProblem(w, http.StatusServiceUnavailable, "server busy: "+strconv.Itoa(cap(s.auditSlots))+" audit log requests are already running (--max-concurrent); retry shortly")
		return nil, nil, false
	}
}

// auditFailed answers a failed read: 404 when the server keeps no log;
// otherwise the log is at fault, which is the operator's to fix, so the
// details go to the server's log and the client hears only that.
func (s *Server) auditFailed(w http.ResponseWriter, err error) {
	if errors.Is(err, auditlog.ErrNoLog) {
		writeProblem(w, http.StatusNotFound, err.Error()+". A server started with --registry PATH serves that registry's log here")
		return
	}
	s.opt.Log.Error("reading the audit log", "err", err)
	writeProblem(w, http.StatusInternalServerError, "the audit log could not be read; the server's log says why")
}

// auditParams are the query parameters /audit takes, in the order its
// messages name them.
var auditParams = []string{"since", "slug", "action", "limit"}

// auditQuery reads /audit's parameters, or says what is wrong with them.
// They are held to get_audit_log's input schema by its generated decoder,
// so the endpoint and the tool accept exactly the same queries.
func auditQuery(v url.Values) (auditlog.Query, string) {
	for _, k := range slices.Sorted(maps.Keys(v)) { // sorted: the same query always gets the same message
		vals := v[k]
		if !slices.Contains(auditParams, k) {
			return auditlog.Query{}, "unknown parameter " + strconv.Quote(k) + ": /audit takes " + strings.Join(auditParams, ", ")
		}
		if len(vals) > 1 {
			return auditlog.Query{}, k + ": given " + strconv.Itoa(len(vals)) + " times; give it once"
		}
	}
	// The arguments object the tool would get: numbers as numbers (when
	// they are whole numbers at all), text as strings.
	args := []byte{'{'}
	for _, k := range auditParams {
		val, ok := v[k]
		if !ok {
			continue
		}
		if len(args) > 1 {
			args = append(args, ',')
		}
		args = append(strconv.AppendQuote(args, k), ':')
		if k == "since" || k == "limit" {
			if !wholeNumber(val[0]) {
				return auditlog.Query{}, k + ": " + strconv.Quote(val[0]) + " is not a whole number of at most 9 digits"
			}
			n, _ := strconv.Atoi(val[0]) // drops leading zeros, which JSON refuses
			args = strconv.AppendInt(args, int64(n), 10)
		} else {
			args = strconv.AppendQuote(args, val[0])
		}
	}
	args = append(args, '}')
	in, err := gen.DecodeGetAuditLogInput(args)
	if err != nil {
		var errs strictjson.Errors
		if errors.As(err, &errs) {
			return auditlog.Query{}, errs[0].Error()
		}
		return auditlog.Query{}, err.Error()
	}
	q := auditlog.Query{Limit: auditlog.DefaultPage}
	if in.Since != nil {
		q.Since = *in.Since
	}
	if in.Slug != nil {
		q.Slug = *in.Slug
	}
	if in.Action != nil {
		q.Action = string(*in.Action)
	}
	if in.Limit != nil {
		q.Limit = *in.Limit
	}
	return q, ""
}

// wholeNumber: decimal digits only, and few enough to fit an int on any
// platform; a sign, a fraction or an exponent is refused here rather than
// passed on as JSON.
func wholeNumber(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// auditETag names the body /audit sends for query q when the log is served
// up to head: a hash of both, as a strong validator.
func auditETag(head auditlog.Head, q auditlog.Query) string {
	key := strings.Join([]string{"3gs audit page v1", strconv.Itoa(head.Seq), head.Hash, strconv.Itoa(q.Since), q.Slug, q.Action, strconv.Itoa(q.Limit)}, "\n")
	sum := sha256.Sum256([]byte(key))
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// etagMatches applies If-None-Match's weak comparison (RFC 9110 13.1.2):
// any listed tag equal to etag, ignoring W/, or "*".
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// notModified answers 304 with the validator the client already holds.
func notModified(w http.ResponseWriter, etag string) {
	h := w.Header()
	h["Etag"] = []string{etag}
	h["Cache-Control"] = noCache
	w.WriteHeader(http.StatusNotModified)
}
