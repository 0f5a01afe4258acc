package httpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/three-good-sources/3gs/internal/sourcehealth"
)

// serveHealthFile answers GET /registry.health.json: the sources' health
// file as this server publishes it, for the servers of curators who
// endorse ours (get_federated_sources shows it when its signature, at
// /registry.health.json.sig, verifies against our curator's key); 404
// before any check.
func (s *Server) serveHealthFile(w http.ResponseWriter, r *http.Request) {
	p, ok := s.healthFile(w, r)
	if !ok {
		return
	}
	if p.Data == nil {
		writeProblem(w, http.StatusNotFound, "no source health file yet: its sources are checked by 3gs serve --check-sources or 3gs check")
		return
	}
	serveHashed(w, r, p.Data)
}

// serveHealthSignature answers GET /registry.health.json.sig: the health
// file's signature, 404 when it is unsigned (the server holds no key).
func (s *Server) serveHealthSignature(w http.ResponseWriter, r *http.Request) {
	p, ok := s.healthFile(w, r)
	if !ok {
		return
	}
	if p.Signature == nil {
		writeProblem(w, http.StatusNotFound, "the source health file is not signed: a server signs it when started with the curator's --key-file, and 3gs check --key-file signs the file it writes")
		return
	}
	serveHashed(w, r, p.Signature)
}

// healthFile is the health file a GET or HEAD serves; it answers the
// request itself (405, or 503 while loading) when there is none to ask.
func (s *Server) healthFile(w http.ResponseWriter, r *http.Request) (sourcehealth.Published, bool) {
	if !readOnly(w, r) {
		return sourcehealth.Published{}, false
	}
	b := s.backend.Load()
	if b == nil {
		w.Header()["Retry-After"] = retryAfter
		writeProblem(w, http.StatusServiceUnavailable, "the registry is still loading; retry shortly")
		return sourcehealth.Published{}, false
	}
	if b.HealthFile == nil {
		return sourcehealth.Published{}, true
	}
	return b.HealthFile(), true
}

// serveHashed is serveBytes with the content's SHA-256 as its ETag and no
// modification time.
func serveHashed(w http.ResponseWriter, r *http.Request, data []byte) {
	sum := sha256.Sum256(data)
	serveBytes(w, r, data, `"`+hex.EncodeToString(sum[:])+`"`, time.Time{})
}
