package httpserver

import (
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
	s.serveHealthPart(w, r, func(p sourcehealth.Published) []byte { return p.Data },
		"no source health file yet: its sources are checked by 3gs serve --check-sources or 3gs check")
}

// serveHealthSignature answers GET /registry.health.json.sig: the health
// file's signature, 404 when it is unsigned (the server holds no key).
func (s *Server) serveHealthSignature(w http.ResponseWriter, r *http.Request) {
	s.serveHealthPart(w, r, func(p sourcehealth.Published) []byte { return p.Signature },
		"the source health file is not signed: a server signs it when started with the curator's --key-file, and 3gs check --key-file signs the file it writes")
}

// serveHealthPart serves the part of the published health file that part
// picks, or 404 with missing when it is nil.
func (s *Server) serveHealthPart(w http.ResponseWriter, r *http.Request, part func(sourcehealth.Published) []byte, missing string) {
	p, ok := s.healthFile(w, r)
	if !ok {
		return
	}
	b := part(p)
	if b == nil {
		writeProblem(w, http.StatusNotFound, missing)
		return
	}
	serveHashed(w, r, b, time.Time{})
}

// healthFile is the health file a GET or HEAD serves (Data nil when
// there is none); false when the request was answered already
// (fileBackend).
func (s *Server) healthFile(w http.ResponseWriter, r *http.Request) (sourcehealth.Published, bool) {
	b := s.fileBackend(w, r)
	if b == nil {
		return sourcehealth.Published{}, false
	}
	if b.HealthFile == nil {
		return sourcehealth.Published{}, true
	}
	return b.HealthFile(), true
}
