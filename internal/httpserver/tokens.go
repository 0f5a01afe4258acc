package httpserver

// Bearer tokens: reading the Authorization header, and warning (rate
// limited) about tokens the server does not recognise.

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/internal/jsonrpc"
)

// checkToken logs a request whose Authorization header carries no token
// the server accepts, which is then served as public: saying why it is not
// recognised, and nothing derived from the token itself. The lines are
// rate-limited (warnToken), so guessing tokens cannot flood the log.
func (s *Server) checkToken(r *http.Request, b *backend, isBearer bool, token, method string) {
	k := b.MCP.Keyring()
	if k.Identify(token).Authenticated() {
		return
	}
	why := "no token in the tokens file matches it (mistyped, revoked, or for another server)"
	switch {
	case k == nil:
		why = "this server was started without a tokens file (--tokens), so it accepts no token"
	case !isBearer:
		why = "the Authorization header is not of the form Bearer TOKEN"
	case token == "":
		why = "the Authorization header carries an empty token"
	}
	s.warnToken(why, r.RemoteAddr, jsonrpc.Brief(method))
}

// tokenWarnings counts the tokens not recognised since the last warning.
type tokenWarnings struct {
	mu      sync.Mutex
	last    time.Time // when a warning was last written
	pending int       // failures since, not written yet
	// why, remote and rpc are the last pending failure's.
	why, remote, rpc string
	timer            *time.Timer // writes the pending count; nil when none
}

const tokenWarning = "bearer token not recognised; the request is served as public"

// warnToken writes the first failure after a quiet interval
// (Options.TokenWarnEvery) at once; failures within the interval are
// counted, and one line at its end gives their number and the last one's
// details. A flood of wrong tokens is one line per interval however fast
// it comes.
func (s *Server) warnToken(why, remote, rpc string) {
	t := &s.tokenWarn
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if t.pending == 0 && now.Sub(t.last) >= s.opt.TokenWarnEvery {
		t.last = now
		s.opt.Log.Warn(tokenWarning, "why", why, "remote", remote, "rpc", rpc, "failures", 1)
		return
	}
	t.pending++
	t.why, t.remote, t.rpc = why, remote, rpc
	if t.timer == nil {
		t.timer = time.AfterFunc(t.last.Add(s.opt.TokenWarnEvery).Sub(now), s.flushTokenWarnings)
	}
}

// flushTokenWarnings writes the failures counted in an interval as one
// line.
func (s *Server) flushTokenWarnings() {
	t := &s.tokenWarn
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timer = nil
	if t.pending == 0 {
		return
	}
	t.last = time.Now()
	s.opt.Log.Warn(tokenWarning, "why", t.why, "remote", t.remote, "rpc", t.rpc, "failures", t.pending,
		"note", "failures counted since the last such line, at most one line per "+s.opt.TokenWarnEvery.String()+"; why, remote and rpc are the last one's")
	t.pending = 0
}

// bearer returns the token of an Authorization header of the Bearer scheme
// (named in any case, RFC 9110). A header of any other form, a bare token
// included, yields notBearer: the caller counts as presenting a token that
// matches none, and is served as public.
func bearer(h string) (string, bool) {
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), true
	}
	return notBearer, false
}

// notBearer stands for a credential of another form. A header value cannot
// hold NUL, so it is never a token.
const notBearer = "\x00"
