package httpserver

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/internal/mcp"
)

// session is one legacy-era client: its handshake state and the requests
// it has running, so notifications/cancelled can stop them.
type session struct {
	id  string
	mcp *mcp.Session

	mu       sync.Mutex
	lastUsed time.Time
	calls    map[string][]*call // by request id text
}

// track registers a running request under its id; the returned function
// removes it again.
func (sess *session) track(id string, cancel context.CancelFunc) func() {
	c := &call{cancel: cancel}
	sess.mu.Lock()
	sess.calls[id] = append(sess.calls[id], c)
	sess.mu.Unlock()
	return func() {
		sess.mu.Lock()
		defer sess.mu.Unlock()
		list := sess.calls[id]
		for i, x := range list {
			if x == c {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(sess.calls, id)
		} else {
			sess.calls[id] = list
		}
	}
}

// call is one running request; a pointer, so two requests that reuse an id
// stay apart.
type call struct{ cancel context.CancelFunc }

// cancel stops every running request with id; unknown ids are ignored.
func (sess *session) cancel(id string) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	for _, c := range sess.calls[id] {
		c.cancel()
	}
}

// sessionTable holds the open sessions, at most max, each ending after
// idle without use.
type sessionTable struct {
	max  int
	idle time.Duration
	now  func() time.Time

	mu   sync.Mutex
	byID map[string]*session
}

func newSessionTable(max int, idle time.Duration, now func() time.Time) *sessionTable {
	return &sessionTable{max: max, idle: idle, now: now, byID: map[string]*session{}}
}

// newSessionID returns 256 random bits as 43 URL-safe base64 characters,
// all visible ASCII as the specification requires.
func newSessionID() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails: crypto/rand panics rather than return short
	return base64.RawURLEncoding.EncodeToString(b)
}

// add opens a session for m; nil when the table is full even after idle
// sessions are ended.
func (t *sessionTable) add(m *mcp.Session) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if len(t.byID) >= t.max {
		t.sweepLocked(now)
		if len(t.byID) >= t.max {
			return nil
		}
	}
	s := &session{id: newSessionID(), mcp: m, lastUsed: now, calls: map[string][]*call{}}
	t.byID[s.id] = s
	return s
}

// get returns the open session id names and marks it used; nil when there
// is none or it has been idle too long (it then ends).
func (t *sessionTable) get(id string) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.byID[id]
	if s == nil {
		return nil
	}
	now := t.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastUsed) > t.idle {
		delete(t.byID, id)
		return nil
	}
	s.lastUsed = now
	return s
}

// remove ends a session; false when it was not open.
func (t *sessionTable) remove(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.byID[id]
	if ok {
		delete(t.byID, id)
		s.mu.Lock()
		for _, list := range s.calls {
			for _, c := range list {
				c.cancel()
			}
		}
		s.mu.Unlock()
	}
	return ok
}

// sweep ends every idle session and returns how many.
func (t *sessionTable) sweep() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sweepLocked(t.now())
}

func (t *sessionTable) sweepLocked(now time.Time) int {
	n := 0
	for id, s := range t.byID {
		s.mu.Lock()
		if now.Sub(s.lastUsed) > t.idle {
			delete(t.byID, id)
			n++
		}
		s.mu.Unlock()
	}
	return n
}

// len is how many sessions are open.
func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}
