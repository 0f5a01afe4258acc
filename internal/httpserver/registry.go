package httpserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/bytedance/sonic"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/store"
)

// serveHealth answers GET /health (schema/health.schema.json): 200 with
// the registry served, or 503 while it is loading.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if !readOnly(w, r) {
		return
	}
	h := gen.Health{Status: gen.HealthStatusLoading, Version: s.opt.Version, ContractVersion: gen.ContractVersion, ProtocolVersions: mcp.SupportedVersions}
	status := http.StatusServiceUnavailable
	if b := s.backend.Load(); b != nil {
		p := b.Published()
		pubkey, sessions := p.Registry.Curator().Pubkey, s.sessions.len()
		h.Status, h.Pubkey, h.Sessions = gen.HealthStatusOk, &pubkey, &sessions
		h.Load = s.load(sessions)
		h.Registry = &gen.HealthRegistry{
			Version:    p.Registry.Version(),
			Updated:    p.Registry.Updated(),
			Categories: len(p.Registry.Categories()),
			SHA256:     p.Registry.SHA256(),
			Signed:     p.Signature.Signed(),
			Verified:   p.Signature.Verified,
		}
		if st := p.Signature; (st.Verified || st.Expired) && !st.Expires.IsZero() {
			exp := st.Expires
			h.Registry.Expires = &exp
		}
		if p.Signature.Expired {
			expired := true
			h.Registry.Expired = &expired
		}
		if st := p.Signature; st.Verified && st.Log != nil {
			seq := st.Log.Seq
			h.Registry.LogSeq = &seq
		}
		if b.Peers != nil {
			h.Peers = peerCounts(b.Peers())
		}
		if b.Follow != nil {
			h.Follow = b.Follow()
		}
		if b.Sources != nil {
			h.Sources = b.Sources()
		}
		status = http.StatusOK
	} else {
		w.Header()["Retry-After"] = retryAfter
	}
	writeJSON(w, status, gen.EncodeHealth(&h))
}

// peerCounts counts the endorsed curators by state.
func peerCounts(ps []peer.Peer) *gen.HealthPeers {
	c := &gen.HealthPeers{Endorsed: len(ps)}
	for _, p := range ps {
		switch p.Status {
		case peer.Fresh:
			c.Fresh++
		case peer.Stale:
			c.Stale++
		case peer.Unreachable:
			c.Unreachable++
		case peer.Refused:
			c.Refused++
		default:
			c.Pending++
		}
	}
	return c
}

// load reports how close the server is to its bounds.
func (s *Server) load(sessions int) *gen.HealthLoad {
	l := &gen.HealthLoad{
		Requests: len(s.slots), MaxRequests: cap(s.slots),
		MaxConnections: s.opt.MaxConnections,
		Sessions:       sessions, MaxSessions: s.opt.MaxSessions,
		SessionsEvicted: int(s.sessions.evictions()),
	}
	if c := s.conns.Load(); c != nil { // nil when not serving a listener of its own (tests)
		l.Connections, l.ConnectionsRefused = c.open(), int(c.refused.Load())
	}
	l.BodyBytes, l.MaxBodyBytes = int(s.bodyBytes.Load()), int(s.bodyBudget)
	l.Saturated = l.Requests >= l.MaxRequests || l.Connections >= l.MaxConnections || l.BodyBytes+bodyChunk > l.MaxBodyBytes
	return l
}

// serveRegistry answers GET /registry with the exact bytes being served,
// so their SHA-256 and signature can be checked by anyone. The ETag is that
// SHA-256; conditional and range requests work as usual. When the registry
// is signed, the Registry-Signature header carries the signature document
// in base64, so the pair is read in one request and cannot straddle a
// change.
func (s *Server) serveRegistry(w http.ResponseWriter, r *http.Request) {
	w.Header()["Vary"] = vary
	if b := s.backend.Load(); b != nil && b.Pages != nil && wantsHTML(r) {
		s.servePage(w, r) // a browser: the home page
		return
	}
	p, ok := s.published(w, r)
	if !ok {
		return
	}
	if p.Signature.Signed() {
		w.Header().Set("Registry-Signature", base64.StdEncoding.EncodeToString(p.Signature.Document))
		w.Header().Set("Link", `</registry.sig>; rel="alternate"; type="application/json"; title="detached signature"`)
	}
	serveBytes(w, r, p.Registry.Bytes(), `"`+p.Registry.SHA256()+`"`, p.Modified)
}

// serveSignature answers GET /registry.sig: the detached signature of the
// registry being served (schema/signature.schema.json), 404 when it has
// none.
func (s *Server) serveSignature(w http.ResponseWriter, r *http.Request) {
	p, ok := s.published(w, r)
	if !ok {
		return
	}
	if !p.Signature.Signed() {
		writeProblem(w, http.StatusNotFound, "the registry served here is not signed; its curator signs it with 3gs sign")
		return
	}
	serveHashed(w, r, p.Signature.Document, p.Modified)
}

// published is the registry a GET or HEAD of the file endpoints serves; it
// answers the request itself (405, or 503 while loading) when there is none.
func (s *Server) published(w http.ResponseWriter, r *http.Request) (store.Served, bool) {
	b := s.fileBackend(w, r)
	if b == nil {
		return store.Served{}, false
	}
	return b.Published(), true
}

// fileBackend is the backend a GET or HEAD of a file endpoint (the
// registry, its signature, the health file) reads; nil when it answered
// the request itself: 405 for another method, 503 while loading.
func (s *Server) fileBackend(w http.ResponseWriter, r *http.Request) *backend {
	if !readOnly(w, r) {
		return nil
	}
	b := s.backend.Load()
	if b == nil {
		w.Header()["Retry-After"] = retryAfter
		writeProblem(w, http.StatusServiceUnavailable, "the registry is still loading; retry shortly")
	}
	return b
}

// serveHashed is serveBytes with data's SHA-256 as its ETag.
func serveHashed(w http.ResponseWriter, r *http.Request, data []byte, modified time.Time) {
	sum := sha256.Sum256(data)
	serveBytes(w, r, data, `"`+hex.EncodeToString(sum[:])+`"`, modified)
}

// serveBytes sends data with its validators; net/http's ServeContent does
// the conditional (If-None-Match, If-Modified-Since: 304) and range logic.
func serveBytes(w http.ResponseWriter, r *http.Request, data []byte, etag string, modified time.Time) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["X-Content-Type-Options"] = noSniff
	h["Cache-Control"] = noCache
	h["Etag"] = []string{etag}
	http.ServeContent(w, r, "", modified, bytes.NewReader(data))
}

// readOnly admits GET and HEAD, answering anything else with 405.
func readOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header()["Allow"] = allowRead
	writeProblem(w, http.StatusMethodNotAllowed, r.Method+" is not served here; use GET")
	return false
}

var (
	noStore   = []string{"no-store"}
	noCache   = []string{"no-cache"}
	allowRead = []string{"GET, HEAD"}
	vary      = []string{"Accept, Sec-Fetch-Dest"}
)

// writeProblem answers a non-MCP endpoint with {"error": why}.
func writeProblem(w http.ResponseWriter, status int, why string) {
	msg, _ := sonic.Marshal(why) // a string always encodes
	body := append([]byte(`{"error":`), msg...)
	writeJSON(w, status, append(body, '}'))
}
