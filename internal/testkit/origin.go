package testkit

import "net/http"

// ServeRegistry answers as a 3gs node does for its signed registry: reg
// at /registry (as JSON), sig at /registry.sig, and 404 for anything
// else. Tests that stand in for an origin or a peer call it from their
// handlers.
func ServeRegistry(w http.ResponseWriter, r *http.Request, reg, sig []byte) {
	switch r.URL.Path {
	case "/registry":
		w.Header().Set("Content-Type", "application/json")
		w.Write(reg)
	case "/registry.sig":
		w.Write(sig)
	default:
		http.NotFound(w, r)
	}
}
