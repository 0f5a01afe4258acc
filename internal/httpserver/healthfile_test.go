package httpserver_test

import (
	"bytes"
	"testing"

	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
)

// withHealthFile gives h's server a backend that publishes p as its
// sources' health file.
func (h *harness) withHealthFile(p *sourcehealth.Published) {
	h.srv.SetBackend(httpserver.Backend{
		MCP:        mcp.NewServer(mcp.Config{Handlers: h.tools, Version: "test"}),
		Published:  h.tools.Published,
		HealthFile: func() sourcehealth.Published { return *p },
	})
}

func TestHealthFileServed(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	p := &sourcehealth.Published{Data: []byte(`{"checked_at":"x"}` + "\n"), Signature: []byte(`{"sig":1}`)}
	h.withHealthFile(p)
	r := h.do("GET", "/registry.health.json", "")
	if r.status != 200 || !bytes.Equal(r.body, p.Data) || r.header.Get("ETag") == "" {
		t.Fatalf("GET /registry.health.json: %d %q", r.status, r.body)
	}
	if c := h.do("GET", "/registry.health.json", "", "If-None-Match", r.header.Get("ETag")); c.status != 304 {
		t.Errorf("conditional GET: %d, want 304", c.status)
	}
	if s := h.do("GET", "/registry.health.json.sig", ""); s.status != 200 || !bytes.Equal(s.body, p.Signature) {
		t.Errorf("GET /registry.health.json.sig: %d %q", s.status, s.body)
	}
	if w := h.do("POST", "/registry.health.json", "{}"); w.status != 405 {
		t.Errorf("POST: %d, want 405", w.status)
	}
}

// Unsigned, the file is served and its signature is 404; before any
// check (or with no health file at all), both are 404.
func TestHealthFileAbsentOrUnsigned(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	for _, path := range []string{"/registry.health.json", "/registry.health.json.sig"} {
		if r := h.do("GET", path, ""); r.status != 404 {
			t.Errorf("no health file: GET %s: %d, want 404", path, r.status)
		}
	}
	p := &sourcehealth.Published{Data: []byte("{}\n")}
	h.withHealthFile(p)
	if r := h.do("GET", "/registry.health.json", ""); r.status != 200 {
		t.Errorf("unsigned file: %d, want 200", r.status)
	}
	if r := h.do("GET", "/registry.health.json.sig", ""); r.status != 404 || !bytes.Contains(r.body, []byte("--key-file")) {
		t.Errorf("unsigned file's signature: %d %s, want 404 naming --key-file", r.status, r.body)
	}
}
