package peer

import (
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
)

func TestLocate(t *testing.T) {
	for _, tc := range []struct {
		raw, reg, sig string
	}{
		// A node URL: the documents 3gs serve --http publishes.
		{"http://peer.example", "http://peer.example/registry", "http://peer.example/registry.sig"},
		{"https://peer.example/", "https://peer.example/registry", "https://peer.example/registry.sig"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/registry", "http://127.0.0.1:8080/registry.sig"},
		{"https://peer.example:8443/", "https://peer.example:8443/registry", "https://peer.example:8443/registry.sig"},
		{"http://[::1]:8080/", "http://[::1]:8080/registry", "http://[::1]:8080/registry.sig"},
		// Any path: the document itself.
		{"https://peer.example/3gs/registry.json", "https://peer.example/3gs/registry.json", "https://peer.example/3gs/registry.json.sig"},
		{"https://peer.example/registry", "https://peer.example/registry", "https://peer.example/registry.sig"},
		{"http://peer.example:8080/a/", "http://peer.example:8080/a/", "http://peer.example:8080/a/.sig"},
	} {
		reg, sig, err := Locate(tc.raw)
		if err != nil || reg != tc.reg || sig != tc.sig {
			t.Errorf("Locate(%q) = %q, %q, %v; want %q, %q", tc.raw, reg, sig, err, tc.reg, tc.sig)
		}
	}
}

func TestLocateRefuses(t *testing.T) {
	for _, tc := range []struct {
		raw, reason string
	}{
		{"ftp://peer.example/registry.json", "must start with http:// or https://"},
		{"file:///etc/passwd", "must start with http:// or https://"},
		{"peer.example/registry.json", "must start with http:// or https://"},
		{"https://curator:secret@peer.example/", "user information"},
		{"https://curator@peer.example/registry.json", "user information"},
		{"https://peer.example/registry.json?v=2", "has a query"},
		{"https://peer.example/?", "has a query"},
		{"https://peer.example/registry.json#top", "has a fragment"},
		{"https:///registry.json", "has no host"},
		{"http://:8080/", "has no host"},
		{"http:peer.example", "has no host"},
		{"http://peer example/", "is not a URL"},
		{"http://127.0.0.1:8080/mcp", "MCP endpoint, not its registry; name the node itself: http://127.0.0.1:8080"},
		{"https://peer.example/mcp/", "name the node itself: https://peer.example"},
	} {
		reg, sig, err := Locate(tc.raw)
		if err == nil {
			t.Errorf("Locate(%q) = %q, %q; want an error mentioning %q", tc.raw, reg, sig, tc.reason)
			continue
		}
		if !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("Locate(%q): %q does not mention %q", tc.raw, err, tc.reason)
		}
	}
}

// An endorsement whose url Locate refuses is a refusal, not an outage, and
// nothing is fetched from anywhere.
func TestEndorsementURLRefused(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.publish(h.peer.signed("1.0.0", ""))
	e := h.endorsement()
	e.URL = "ftp://" + strings.TrimPrefix(h.srv.URL, "http://") + "/registry"
	h.net.SetEndorsements(h.own.uri, []gen.Endorsement{e})
	h.refresh()
	p := h.only()
	wantOutcome(t, p, Refused, "must start with http:// or https://")
	if p.Copy != nil {
		t.Errorf("a copy was accepted from %s", e.URL)
	}
	if reg, sig, _ := h.srv.counts(); reg+sig != 0 {
		t.Errorf("the server was asked %d times", reg+sig)
	}
}
