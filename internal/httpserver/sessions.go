package httpserver

import (
	"container/list"
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
	id     string
	mcp    *mcp.Session
	client string        // the address it was opened from
	elem   *list.Element // its place in the table's use order

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

// sessionTable holds the open sessions, at most max and at most perClient
// per client address, each ending after idle without use.
//
// A full table never locks anyone out. Clients that never send DELETE, or
// a flood of initialize calls, would otherwise hold every place until the
// idle timeout (half an hour) and every newcomer, admins included, would be
// refused. Instead a new session takes the place of the least recently
// used one that has no request running: of the same client when that
// client is at its own bound, else of anyone. An evicted client gets 404
// on its next request and, as the protocol asks, initializes again.
type sessionTable struct {
	max, perClient int
	idle           time.Duration
	now            func() time.Time

	mu       sync.Mutex
	byID     map[string]*session
	lru      *list.List // of *session, most recently used first
	byClient map[string]int
	evicted  int64
}

func newSessionTable(max, perClient int, idle time.Duration, now func() time.Time) *sessionTable {
	return &sessionTable{max: max, perClient: perClient, idle: idle, now: now,
		byID: map[string]*session{}, lru: list.New(), byClient: map[string]int{}}
}

// newSessionID returns 256 random bits as 43 URL-safe base64 characters,
// all visible ASCII as the specification requires.
func newSessionID() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails: crypto/rand panics rather than return short
	return base64.RawURLEncoding.EncodeToString(b)
}

// add opens a session for m on behalf of client (its address); nil when
// the table, or the client's share of it, is full of sessions that are all
// running requests.
func (t *sessionTable) add(m *mcp.Session, client string) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if t.byClient[client] >= t.perClient {
		v := t.leastRecentlyUsedLocked(func(s *session) bool { return s.client == client })
		if v == nil {
			return nil
		}
		t.dropLocked(v)
		t.evicted++
	}
	if len(t.byID) >= t.max {
		t.sweepLocked(now)
		if len(t.byID) >= t.max {
			v := t.leastRecentlyUsedLocked(func(*session) bool { return true })
			if v == nil {
				return nil
			}
			t.dropLocked(v)
			t.evicted++
		}
	}
	s := &session{id: newSessionID(), mcp: m, client: client, lastUsed: now, calls: map[string][]*call{}}
	s.elem = t.lru.PushFront(s)
	t.byID[s.id] = s
	t.byClient[client]++
	return s
}

// leastRecentlyUsedLocked is the session used longest ago that matches
// and has no request running, or nil.
func (t *sessionTable) leastRecentlyUsedLocked(match func(*session) bool) *session {
	for e := t.lru.Back(); e != nil; e = e.Prev() {
		s := e.Value.(*session)
		if !match(s) {
			continue
		}
		s.mu.Lock()
		running := len(s.calls) > 0
		s.mu.Unlock()
		if !running {
			return s
		}
	}
	return nil
}

// dropLocked forgets s, cancelling whatever it still runs.
func (t *sessionTable) dropLocked(s *session) {
	delete(t.byID, s.id)
	t.lru.Remove(s.elem)
	if t.byClient[s.client]--; t.byClient[s.client] <= 0 {
		delete(t.byClient, s.client)
	}
	s.mu.Lock()
	for _, list := range s.calls {
		for _, c := range list {
			c.cancel()
		}
	}
	s.mu.Unlock()
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
	expired := now.Sub(s.lastUsed) > t.idle
	if !expired {
		s.lastUsed = now
	}
	s.mu.Unlock()
	if expired {
		t.dropLocked(s)
		return nil
	}
	t.lru.MoveToFront(s.elem)
	return s
}

// remove ends a session; false when it was not open.
func (t *sessionTable) remove(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.byID[id]
	if ok {
		t.dropLocked(s)
	}
	return ok
}

// sweep ends every idle session and returns how many.
func (t *sessionTable) sweep() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sweepLocked(t.now())
}

// sweepLocked ends the sessions idle too long. They are the tail of the
// use order, so the walk stops at the first one still fresh.
func (t *sessionTable) sweepLocked(now time.Time) int {
	n := 0
	for e := t.lru.Back(); e != nil; {
		s := e.Value.(*session)
		prev := e.Prev()
		s.mu.Lock()
		expired := now.Sub(s.lastUsed) > t.idle
		s.mu.Unlock()
		if !expired {
			break
		}
		t.dropLocked(s)
		n++
		e = prev
	}
	return n
}

// len is how many sessions are open.
func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}

// evictions is how many sessions have made way for newer ones.
func (t *sessionTable) evictions() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.evicted
}
