package httpserver

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/internal/inflight"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/mcp"
)

// session is one legacy-era client: its handshake state and the requests
// it has running, so notifications/cancelled can stop them.
type session struct {
	id      string
	mcp     *mcp.Session
	client  string        // the address it was opened from
	elem    *list.Element // its place in the table's use order
	expires time.Time     // as its id says; it ends then, however used
	// adopted: opened by another replica (or an earlier run of this one)
	// and taken up here from its id. Dropping it from the table only
	// frees memory, since its id would bring it back; DELETE remembers it
	// as ended.
	adopted bool

	mu       sync.Mutex
	lastUsed time.Time
	// requests are the ones it has running, for notifications/cancelled
	// and for its end.
	requests inflight.Requests
}

// sessionTable holds the open sessions, at most max and at most perClient
// per client address, each ending after idle without use, and all ending
// when their ids expire.
//
// A full table never locks anyone out. Clients that never send DELETE, or
// a flood of initialize calls, would otherwise hold every place until the
// idle timeout (half an hour) and every newcomer, admins included, would be
// refused. Instead a new session takes the place of the least recently
// used one that has no request running: of the same client when that
// client is at its own bound, else of anyone. An evicted client gets 404
// on its next request and, as the protocol asks, initializes again.
//
// Replicas: ids are signed (sessionid.go), so a request naming a session
// this process does not hold, opened by another process with the same
// secret, adopts it from its id. For the sessions it opened itself the
// table stays the whole truth, as on a single server. For adopted ones it
// is only a cache: one dropped for idleness or room is adopted again on
// its next request, and only DELETE (remembered in ended) or its expiry
// ends it here. No replica can tell the others a session ended: an id
// ended on one stays good on the rest until it expires.
type sessionTable struct {
	max, perClient int
	idle           time.Duration
	now            func() time.Time
	ids            *sessionIDs

	mu       sync.Mutex
	byID     map[string]*session
	lru      *list.List // of *session, most recently used first
	byClient map[string]int
	evicted  int64
	// ended holds the ids of sessions from elsewhere that DELETE ended
	// here, until they expire, since the id alone would open them again.
	// At most max; past it the oldest is forgotten, and that id becomes
	// good here again, as it still is on the other replicas.
	ended     map[string]*list.Element // of tombstone, in endedList
	endedList *list.List               // oldest first
}

// tombstone is a session from elsewhere that was ended here.
type tombstone struct {
	id      string
	expires time.Time
}

// newSessionTable signs ids with a secret of its own; Server.New replaces
// it with one built from Options.SessionSecret.
func newSessionTable(max, perClient int, idle time.Duration, now func() time.Time) *sessionTable {
	return &sessionTable{max: max, perClient: perClient, idle: idle, now: now, ids: newSessionIDs(nil, 0),
		byID: map[string]*session{}, lru: list.New(), byClient: map[string]int{},
		ended: map[string]*list.Element{}, endedList: list.New()}
}

// add opens a session for m on behalf of client (its address); nil when
// the table, or the client's share of it, is full of sessions that are all
// running requests.
func (t *sessionTable) add(m *mcp.Session, client string) *session {
	version := ""
	if m != nil {
		version = m.Version()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if !t.makeRoomLocked(client, now) {
		return nil
	}
	id, expires := t.ids.issue(version, now)
	return t.insertLocked(&session{id: id, mcp: m, client: client, lastUsed: now, expires: expires})
}

// makeRoomLocked makes a place for one more session of client, evicting
// if need be; false when every candidate is running a request.
func (t *sessionTable) makeRoomLocked(client string, now time.Time) bool {
	if t.byClient[client] >= t.perClient {
		v := t.leastRecentlyUsedLocked(func(s *session) bool { return s.client == client })
		if v == nil {
			return false
		}
		t.dropLocked(v)
		t.evicted++
	}
	if len(t.byID) >= t.max {
		t.sweepLocked(now)
		if len(t.byID) >= t.max {
			v := t.leastRecentlyUsedLocked(func(*session) bool { return true })
			if v == nil {
				return false
			}
			t.dropLocked(v)
			t.evicted++
		}
	}
	return true
}

func (t *sessionTable) insertLocked(s *session) *session {
	s.elem = t.lru.PushFront(s)
	t.byID[s.id] = s
	t.byClient[s.client]++
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
		if s.requests.Len() == 0 {
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
	s.requests.CancelAll()
}

// get returns the session id names if this table holds it, and marks it
// used; nil when it holds none, or the session has been idle too long or
// its id has expired (it then ends here).
func (t *sessionTable) get(id string) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.byID[id]
	if s == nil || !t.useLocked(s, t.now()) {
		return nil
	}
	return s
}

// useLocked marks s used at now; false, and s dropped, when it had ended
// by then.
func (t *sessionTable) useLocked(s *session, now time.Time) bool {
	s.mu.Lock()
	expired := now.Sub(s.lastUsed) > t.idle || !now.Before(s.expires)
	if !expired {
		s.lastUsed = now
	}
	s.mu.Unlock()
	if expired {
		t.dropLocked(s)
		return false
	}
	t.lru.MoveToFront(s.elem)
	return true
}

// open returns the session id names: the one this table holds, or else
// one adopted from the id itself when another process issued it (see
// adoptable), in the state initialize left it in there, made from srv.
// busy reports an adoptable id refused for want of room, as add refuses.
func (t *sessionTable) open(id, client string, srv *mcp.Server) (s *session, busy bool) {
	if s := t.get(id); s != nil {
		return s, false
	}
	c, ok := t.adoptable(id)
	if !ok {
		return nil, false
	}
	m := resumeSession(srv, c.version)
	if m == nil {
		return nil, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	// Between the checks above and the lock, another request may have
	// adopted it, or a DELETE ended it.
	if s := t.byID[id]; s != nil {
		if !t.useLocked(s, now) {
			return nil, false
		}
		return s, false
	}
	if _, ended := t.ended[id]; ended {
		return nil, false
	}
	if !t.makeRoomLocked(client, now) {
		return nil, true
	}
	return t.insertLocked(&session{id: id, mcp: m, client: client, lastUsed: now, expires: c.expires, adopted: true}), false
}

// adoptable reports whether id, which this table does not hold, names a
// session it may take up: signed with this secret, not expired, issued by
// another process (one issued here and missing was ended here), and not
// ended here by DELETE.
func (t *sessionTable) adoptable(id string) (idClaims, bool) {
	c, ok := t.ids.check(id, t.now())
	if !ok || c.own {
		return idClaims{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ended := t.ended[id]; ended {
		return idClaims{}, false
	}
	return c, true
}

// end ends a session, for DELETE; false when there was none to end. A
// session from elsewhere, held here or not, is remembered as ended until
// its id expires, or its id would open it again; the replicas that did not
// receive the DELETE cannot know, and accept the id until it expires.
func (t *sessionTable) end(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.byID[id]; ok {
		t.dropLocked(s)
		if s.adopted {
			t.buryLocked(id, s.expires)
		}
		return true
	}
	c, ok := t.ids.check(id, t.now())
	if !ok || c.own {
		return false
	}
	if _, ended := t.ended[id]; ended {
		return false
	}
	t.buryLocked(id, c.expires)
	return true
}

// buryLocked remembers id as ended until expires, forgetting the oldest
// such id when max are remembered already.
func (t *sessionTable) buryLocked(id string, expires time.Time) {
	if t.endedList.Len() >= t.max {
		oldest := t.endedList.Front()
		delete(t.ended, oldest.Value.(tombstone).id)
		t.endedList.Remove(oldest)
	}
	t.ended[id] = t.endedList.PushBack(tombstone{id: id, expires: expires})
}

// sweep ends every idle session and forgets the ended ids that have
// expired (they would be refused anyway); it returns how many sessions
// ended.
func (t *sessionTable) sweep() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for e := t.endedList.Front(); e != nil; {
		next := e.Next()
		if ts := e.Value.(tombstone); !now.Before(ts.expires) {
			delete(t.ended, ts.id)
			t.endedList.Remove(e)
		}
		e = next
	}
	return t.sweepLocked(now)
}

// sweepLocked ends the sessions idle too long. They are the tail of the
// use order, so the walk stops at the first one still fresh. Sessions
// past their expiry but in use are left to get, which ends them when next
// asked for.
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

// resumeSession returns a session of srv in the state initialize leaves
// it in for version, by running that initialize. The core keeps nothing
// else of a legacy session (it stores no client info, capabilities or log
// level) but the catalog its instructions gave, which is forgotten, so
// this rebuilds it whole; and going through initialize keeps
// it in step with whatever the core's handshake does. nil when the core
// negotiates another version, as it would for one it no longer serves.
func resumeSession(srv *mcp.Server, version string) *mcp.Session {
	m, _, perr := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{}}}`))
	if perr != nil {
		return nil
	}
	req := mcp.Prepare(m)
	ms := srv.NewSession()
	ms.Answer(context.Background(), &req, nil)
	if ms.Version() != version {
		return nil
	}
	// Its client holds the catalog the session was first given, which may
	// be an earlier registry's: its answers list the categories.
	ms.ForgetCatalog()
	return ms
}
