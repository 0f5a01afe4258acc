// Package inflight is the one way the transports keep the requests a
// session or connection has running, so that notifications/cancelled, and
// the end of the session, can stop them. stdio and the HTTP server's
// legacy sessions both use it.
//
// Each request's context is a plain context.WithCancel. stdio and the
// HTTP sessions each had a hand-made context (no Done channel until asked
// for, a slot-indexed table) to save its allocations; on the benchmark
// mix it saved 0.4% of the bytes per request (26020 against 26115 B/op,
// 86 against 89 allocs, stdio BenchmarkServePipelined/mix-v1) and no
// measurable CPU, under the 5% a second implementation of context.Context
// would have to earn.
package inflight

import (
	"bytes"
	"context"
	"sync"

	"github.com/bytedance/sonic"

	"github.com/three-good-sources/3gs/internal/jsonrpc"
)

// Requests are the requests running in one session. The zero value is
// ready to use.
type Requests struct {
	mu      sync.Mutex
	running map[*Request]struct{}
}

// Request is one running request.
type Request struct {
	ctx    context.Context
	cancel context.CancelFunc
	id     []byte // the JSON-RPC id, as the client wrote it
}

// Context is the request's context: parent's, ended also when the request
// is cancelled or finished.
func (r *Request) Context() context.Context { return r.ctx }

// Start registers a request with id (as written in the message) and
// returns it; its context is a child of parent. Finish it when it is done.
func (rs *Requests) Start(parent context.Context, id []byte) *Request {
	ctx, cancel := context.WithCancel(parent)
	r := &Request{ctx: ctx, cancel: cancel, id: id}
	rs.mu.Lock()
	if rs.running == nil {
		rs.running = map[*Request]struct{}{}
	}
	rs.running[r] = struct{}{}
	rs.mu.Unlock()
	return r
}

// Finish takes r off the running requests and ends its context, so
// whatever the handler started on it stops too.
func (rs *Requests) Finish(r *Request) {
	rs.mu.Lock()
	delete(rs.running, r)
	rs.mu.Unlock()
	r.cancel()
}

// Cancel cancels every running request whose id is id; unknown or
// finished ids are ignored, as the specification allows.
func (rs *Requests) Cancel(id []byte) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for r := range rs.running {
		if bytes.Equal(r.id, id) {
			r.cancel()
		}
	}
}

// Cancelled honours a notifications/cancelled whose params are params:
// the request it names is cancelled. Params without a requestId are
// ignored.
func (rs *Requests) Cancelled(params []byte) {
	var p struct {
		RequestID sonic.NoCopyRawMessage `json:"requestId"`
	}
	if params == nil || jsonrpc.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return
	}
	rs.Cancel(p.RequestID)
}

// CancelAll cancels every running request, when their session ends.
func (rs *Requests) CancelAll() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for r := range rs.running {
		r.cancel()
	}
}

// Len is how many requests are running.
func (rs *Requests) Len() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.running)
}
