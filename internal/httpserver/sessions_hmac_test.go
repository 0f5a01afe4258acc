package httpserver_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/httpserver"
)

// replicaSecret is a session secret two test replicas share.
var replicaSecret = bytes.Repeat([]byte("replica secret. "), 2)

const (
	legacyList = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	legacyCall = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"learn rust"}}}`
	initNotice = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// replicas are servers built from the same options, as behind a load
// balancer without sticky routing.
func replicas(t *testing.T, n int, opt httpserver.Options) []*harness {
	t.Helper()
	var hs []*harness
	for range n {
		hs = append(hs, newHarness(t, opt))
	}
	return hs
}

// advance moves every replica's clock on by d.
func advance(hs []*harness, d time.Duration) {
	for _, h := range hs {
		h.clock.Advance(d)
	}
}

// openVersion starts a legacy session asking for version.
func (h *harness) openVersion(version string) string {
	h.t.Helper()
	r := h.post(strings.Replace(initialize, "2025-11-25", version, 1))
	id := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || id == "" || !strings.Contains(string(r.body), `"protocolVersion":"`+version+`"`) {
		h.t.Fatalf("initialize %s: %d %s (session %q)", version, r.status, r.body, id)
	}
	return id
}

// TestSessionAcrossReplicas: a session opened on one replica is served by
// another with the same secret, which has never seen its initialize: its
// notifications are accepted, its requests answered, and the version it
// negotiated is the one the other replica holds it to.
func TestSessionAcrossReplicas(t *testing.T) {
	rs := replicas(t, 2, httpserver.Options{SessionSecret: replicaSecret})
	a, b := rs[0], rs[1]
	sid := a.openVersion("2025-06-18")

	if r := b.post(initNotice, "Mcp-Session-Id", sid); r.status != http.StatusAccepted {
		t.Fatalf("notifications/initialized on the other replica: %d %s", r.status, r.body)
	}
	r := b.post(legacyCall, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18")
	if code, msg := r.rpcError(); r.status != http.StatusOK || code != 0 || !strings.Contains(string(r.body), `"result"`) {
		t.Fatalf("tools/call on the other replica: %d %s (error %d %q)", r.status, r.body, code, msg)
	}
	if r := b.post(legacyList, "Mcp-Session-Id", sid); r.status != http.StatusOK {
		t.Fatalf("tools/list without a version header on the other replica: %d %s", r.status, r.body)
	}
	// The other replica holds the session to the version negotiated on
	// the first, as the first does.
	for _, h := range rs {
		if r := h.post(legacyList, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"); r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "2025-06-18") {
			t.Errorf("a version header other than the negotiated one: %d %s", r.status, r.body)
		}
	}
	// Back on the first replica the session is still its own.
	if r := a.post(legacyCall, "Mcp-Session-Id", sid); r.status != http.StatusOK {
		t.Fatalf("tools/call back on the first replica: %d %s", r.status, r.body)
	}
}

// TestSessionDeleteOnReplica pins what DELETE can and cannot do without
// shared state: it ends the session on the replica that receives it, and
// the others, which cannot know, accept the id until it expires.
func TestSessionDeleteOnReplica(t *testing.T) {
	rs := replicas(t, 3, httpserver.Options{SessionSecret: replicaSecret})
	a, b, c := rs[0], rs[1], rs[2]
	sid := a.open()
	del := http.MethodDelete
	for _, step := range []struct {
		on           *harness
		method, body string
		want         int
		what         string
	}{
		{b, "", legacyList, http.StatusOK, "adopted"},
		{b, del, "", http.StatusNoContent, "DELETE of an adopted session"},
		{b, "", legacyList, http.StatusNotFound, "after DELETE on the same replica"},
		{b, "", initNotice, http.StatusNotFound, "a notification after DELETE on the same replica"},
		{b, del, "", http.StatusNotFound, "DELETE twice"},
		// A DELETE reaching a replica that never held the session ends it
		// there too.
		{c, del, "", http.StatusNoContent, "DELETE on a replica that never held it"},
		{c, "", legacyList, http.StatusNotFound, "after that DELETE"},
		// The documented limit: the issuer never heard of either DELETE.
		{a, "", legacyList, http.StatusOK, "on the replica that received no DELETE"},
		// And a DELETE on the issuer ends it there as it always did.
		{a, del, "", http.StatusNoContent, "DELETE on the issuer"},
		{a, "", legacyList, http.StatusNotFound, "after DELETE on the issuer"},
	} {
		var r reply
		if step.method == del {
			r = step.on.do(del, "/mcp", "", "Mcp-Session-Id", sid)
		} else {
			r = step.on.post(step.body, "Mcp-Session-Id", sid)
		}
		if r.status != step.want {
			t.Fatalf("%s: %d %s", step.what, r.status, r.body)
		}
	}
}

// TestSessionOtherSecret: a replica with a different secret, or with none
// (each then draws its own), refuses the id with 404, for requests,
// notifications and DELETE alike.
func TestSessionOtherSecret(t *testing.T) {
	other := bytes.Repeat([]byte("another secret! "), 2)
	for name, opts := range map[string][2]httpserver.Options{
		"different secrets": {{SessionSecret: replicaSecret}, {SessionSecret: other}},
		"no secret":         {{}, {}},
	} {
		t.Run(name, func(t *testing.T) {
			a, b := newHarness(t, opts[0]), newHarness(t, opts[1])
			sid := a.open()
			if r := b.post(legacyList, "Mcp-Session-Id", sid); r.status != http.StatusNotFound {
				t.Errorf("request: %d %s", r.status, r.body)
			}
			if r := b.post(initNotice, "Mcp-Session-Id", sid); r.status != http.StatusNotFound {
				t.Errorf("notification: %d %s", r.status, r.body)
			}
			if r := b.do(http.MethodDelete, "/mcp", "", "Mcp-Session-Id", sid); r.status != http.StatusNotFound {
				t.Errorf("DELETE: %d %s", r.status, r.body)
			}
			if r := a.post(legacyList, "Mcp-Session-Id", sid); r.status != http.StatusOK {
				t.Errorf("on its own server: %d %s", r.status, r.body)
			}
		})
	}
}

// TestSessionIDTampered: changing any one character of an id makes it
// unknown everywhere, on its issuer too.
func TestSessionIDTampered(t *testing.T) {
	rs := replicas(t, 2, httpserver.Options{SessionSecret: replicaSecret})
	sid := rs[0].open()
	for i := range len(sid) {
		c := byte('A')
		if sid[i] == 'A' {
			c = 'B'
		}
		bad := sid[:i] + string(c) + sid[i+1:]
		for j, h := range rs {
			if r := h.post(legacyList, "Mcp-Session-Id", bad); r.status != http.StatusNotFound {
				t.Fatalf("replica %d, id with character %d changed: %d %s", j, i, r.status, r.body)
			}
		}
	}
	for _, bad := range []string{sid + "A", sid[:len(sid)-1], strings.ToUpper(sid), "x"} {
		if r := rs[1].post(legacyList, "Mcp-Session-Id", bad); r.status != http.StatusNotFound {
			t.Errorf("id %q: %d %s", bad, r.status, r.body)
		}
	}
}

// TestSessionIDExpiry: an id is good for SessionLifetime after initialize,
// however much it is used, on every replica; the clock is the harness's.
func TestSessionIDExpiry(t *testing.T) {
	rs := replicas(t, 2, httpserver.Options{SessionSecret: replicaSecret, SessionLifetime: time.Hour})
	sid := rs[0].open()
	for range 5 { // used every 11 minutes, never idle
		advance(rs, 11*time.Minute)
		for j, h := range rs {
			if r := h.post(legacyList, "Mcp-Session-Id", sid); r.status != http.StatusOK {
				t.Fatalf("replica %d, before expiry: %d %s", j, r.status, r.body)
			}
		}
	}
	advance(rs, 5*time.Minute) // 60 minutes after initialize
	for j, h := range rs {
		if r := h.post(legacyList, "Mcp-Session-Id", sid); r.status != http.StatusNotFound {
			t.Errorf("replica %d, at expiry: %d %s", j, r.status, r.body)
		}
	}
	// A replica that never saw it refuses it as well, notification or not.
	late := newHarness(t, httpserver.Options{SessionSecret: replicaSecret})
	late.clock.Advance(time.Hour)
	if r := late.post(initNotice, "Mcp-Session-Id", sid); r.status != http.StatusNotFound {
		t.Errorf("a notification with an expired id: %d %s", r.status, r.body)
	}
}

// TestSessionIdleAcrossReplicas: idleness ends a session on the replica
// that opened it, as on a single server; another replica only forgets it
// and takes it up again from its id, since a client spread over many
// replicas may use each one rarely.
func TestSessionIdleAcrossReplicas(t *testing.T) {
	rs := replicas(t, 2, httpserver.Options{SessionSecret: replicaSecret, SessionIdle: time.Minute})
	a, b := rs[0], rs[1]
	sid := a.open()
	if r := b.post(legacyList, "Mcp-Session-Id", sid); r.status != http.StatusOK {
		t.Fatalf("adopted: %d %s", r.status, r.body)
	}
	advance(rs, 2*time.Minute)
	if r := b.post(legacyList, "Mcp-Session-Id", sid); r.status != http.StatusOK {
		t.Errorf("the other replica after its copy sat idle: %d %s", r.status, r.body)
	}
	if r := a.post(legacyList, "Mcp-Session-Id", sid); r.status != http.StatusNotFound {
		t.Errorf("the issuer after the session sat idle: %d %s", r.status, r.body)
	}
}

// TestSessionAdoptWhenFull: taking up a session from elsewhere needs a
// place in the table like initialize does, and gets 503 when every
// session that could make way is running a request.
func TestSessionAdoptWhenFull(t *testing.T) {
	rs := replicas(t, 2, httpserver.Options{SessionSecret: replicaSecret, MaxSessions: 1})
	a, b := rs[0], rs[1]
	foreign := a.open()
	own := b.open()
	block := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"block"}}}`
	done := make(chan reply, 1)
	go func() { done <- b.post(block, "Mcp-Session-Id", own) }()
	<-b.tools.entered
	r := b.post(legacyList, "Mcp-Session-Id", foreign)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Errorf("adopting with the only place busy: %d %s", r.status, r.body)
	}
	b.tools.release <- struct{}{}
	if r := <-done; r.status != http.StatusOK {
		t.Fatalf("the held request: %d %s", r.status, r.body)
	}
	if r := b.post(legacyList, "Mcp-Session-Id", foreign); r.status != http.StatusOK {
		t.Errorf("adopting once the place is free: %d %s", r.status, r.body)
	}
}

// TestSessionIDForm: ids are visible ASCII (the specification's rule),
// URL-safe, of one length, and never repeat.
func TestSessionIDForm(t *testing.T) {
	h := newHarness(t, httpserver.Options{SessionSecret: replicaSecret})
	seen := map[string]bool{}
	for range 50 {
		sid := h.open()
		if len(sid) != 68 || strings.IndexFunc(sid, func(r rune) bool {
			return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
		}) >= 0 {
			t.Fatalf("session id %q is not 68 base64url characters", sid)
		}
		if seen[sid] || seen[sid[:8]] {
			t.Fatalf("session id %q, or its first 8 characters (what the access log keeps), seen before", sid)
		}
		seen[sid], seen[sid[:8]] = true, true
	}
}
