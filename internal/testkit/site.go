package testkit

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Site is a loopback web server answering each path in pages with its
// body, and every other path with 404; it closes when the test ends.
func Site(t testing.TB, pages map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}
