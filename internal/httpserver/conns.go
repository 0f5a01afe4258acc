package httpserver

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// connLimiter bounds the connections a server holds open. Without it,
// twenty thousand idle keep-alive connections exhaust the process's file
// descriptors and every new client hangs in the accept queue.
//
// At the bound, a new connection first displaces the connection that has
// waited longest without a request in progress: idle between requests, or
// new and still sending its headers (a slow or stalled client). Only when
// every connection is running a request is the newcomer refused, at once
// and with a 503, so it neither hangs nor holds a descriptor.
type connLimiter struct {
	net.Listener
	max int
	now func() time.Time

	mu    sync.Mutex
	conns map[net.Conn]*connInfo

	refused  atomic.Int64  // newcomers answered 503, for /health
	refusing chan struct{} // one per connection being refused
}

type connInfo struct {
	state http.ConnState
	since time.Time // when it entered state
}

func newConnLimiter(ln net.Listener, max int, now func() time.Time) *connLimiter {
	return &connLimiter{Listener: ln, max: max, now: now, conns: map[net.Conn]*connInfo{}, refusing: make(chan struct{}, refusers)}
}

// Accept returns the next connection the bound admits.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		now := l.now()
		l.mu.Lock()
		var victim net.Conn
		if len(l.conns) >= l.max {
			victim = l.oldestWaitingLocked()
			if victim == nil {
				l.mu.Unlock()
				l.refused.Add(1)
				l.refuse(c)
				continue
			}
			delete(l.conns, victim)
		}
		l.conns[c] = &connInfo{state: http.StateNew, since: now}
		l.mu.Unlock()
		if victim != nil {
			victim.Close() // the server sees the read fail and forgets it
		}
		return c, nil
	}
}

// oldestWaitingLocked is the connection that has waited longest with no
// request running, or nil when every one is running a request.
func (l *connLimiter) oldestWaitingLocked() net.Conn {
	var oldest net.Conn
	var since time.Time
	for c, info := range l.conns {
		if info.state != http.StateIdle && info.state != http.StateNew {
			continue
		}
		if oldest == nil || info.since.Before(since) {
			oldest, since = c, info.since
		}
	}
	return oldest
}

// track is the server's ConnState hook.
func (l *connLimiter) track(c net.Conn, state http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch state {
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
	default:
		if info, ok := l.conns[c]; ok && info.state != state {
			info.state, info.since = state, l.now()
		}
	}
}

// open is how many connections are held.
func (l *connLimiter) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// busyResponse is what a refused connection reads before it is closed.
var busyResponse = func() []byte {
	const body = "Server busy: every connection this server may hold is running a request (--max-connections); retry shortly\r\n"
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nConnection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

// refusers bounds the connections being refused at once; past it a
// connection is closed without an answer, so a flood of them costs no
// more than this many goroutines.
const refusers = 64

// refuse answers 503 on c and closes it, in the background so Accept goes
// on. The request is read first, briefly, because a client that gets an
// answer before it has sent its request takes it for a broken connection
// rather than a refusal; and the rest of what it sends is drained after
// the answer, because closing a socket with unread input resets it and
// can destroy the answer in flight.
func (l *connLimiter) refuse(c net.Conn) {
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 4096)
		seen := 0
		for seen < 64<<10 {
			n, err := c.Read(buf)
			seen += n
			if err != nil || bytes.Contains(buf[:n], []byte("\r\n\r\n")) {
				break
			}
		}
		c.Write(busyResponse)
		if tc, ok := c.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		io.CopyN(io.Discard, c, 64<<10)
	}()
}
