// Package stdio carries MCP over a byte stream pair: newline-delimited
// JSON-RPC in, one response line per request out.
//
// One goroutine reads and parses. Requests run concurrently on MaxInFlight
// long-lived workers (whose grown stacks are reused, unlike a fresh
// goroutine per request): when all are busy the reader stops reading, so a
// fast client cannot grow memory without bound. Answers wait to be written
// in a queue of at most 2×MaxInFlight (plus what the 64 KiB output buffer
// took before the last write blocked); a client that stops reading them
// fills it, which stops the workers and so the reader: memory stays
// bounded by the limits whichever side is slow. All writes go
// through one writer goroutine that batches whatever is queued and flushes
// when the queue is empty, so pipelined load costs few system calls while a
// lone request is answered at once.
//
// The session listens for changes to its tools (mcp.Session.Listen): when
// the tools it lists change while it runs, it is sent
// notifications/tools/list_changed, once for however many changes come
// before the notification is queued.
package stdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"

	"github.com/three-good-sources/3gs/internal/inflight"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/mcp"
)

// Options bound a connection.
type Options struct {
	// MaxMessageBytes is the longest accepted line, newline excluded.
	MaxMessageBytes int
	// MaxInFlight is how many requests may run at once.
	MaxInFlight int
	Log         *slog.Logger
}

// Defaults.
const (
	DefaultMaxMessageBytes = 4 << 20
	DefaultMaxInFlight     = 64
)

// Serve answers the messages read from in on out until in reaches EOF or
// ctx is cancelled. Either way it stops reading, lets every request already
// read finish, writes their answers, and returns.
func Serve(ctx context.Context, sess *mcp.Session, in io.Reader, out io.Writer, opt Options) error {
	if opt.MaxMessageBytes <= 0 {
		opt.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opt.MaxInFlight <= 0 {
		opt.MaxInFlight = DefaultMaxInFlight
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	c := &conn{sess: sess, opt: opt, w: newWriter(out, 2*opt.MaxInFlight), jobs: make(chan *job), quit: make(chan struct{}),
		values: context.WithoutCancel(ctx)}
	go c.w.loop()
	// A change to the session's tools is queued by a goroutine of its
	// own: the server's Refresh, which tells it, must never wait on a
	// client that does not read.
	changed, told := make(chan struct{}, 1), make(chan struct{})
	stopListening := sess.Listen(func() {
		select {
		case changed <- struct{}{}:
		default: // one is pending already, and says as much
		}
	})
	go c.tellChanges(changed, told)
	c.workers.Add(opt.MaxInFlight)
	for range opt.MaxInFlight {
		go c.work()
	}

	readErr := make(chan error, 1)
	go func() { readErr <- c.read(ctx, in) }()
	var err error
	select {
	case err = <-readErr:
	case <-ctx.Done():
		opt.Log.Info("shutting down: finishing requests in flight")
	}
	// Every request handed to a worker is finished before the workers
	// return; the reader hands over no more once quit is closed. Each
	// worker stops at the nil it takes after whatever it was running.
	stopListening()
	close(c.quit)
	for range opt.MaxInFlight {
		c.jobs <- nil
	}
	c.workers.Wait()
	c.w.close()
	<-told
	if err == nil {
		err = c.w.err
	}
	return err
}

type conn struct {
	sess    *mcp.Session
	opt     Options
	w       *writer
	jobs    chan *job // unbuffered: a send waits for a free worker; nil stops one
	quit    chan struct{}
	workers sync.WaitGroup
	// inflight are the requests started and not finished, for
	// notifications/cancelled.
	inflight inflight.Requests
	// values is Serve's ctx for its values alone: Serve's ctx ending does
	// not cancel a request, which finishes and is answered.
	values context.Context
}

// tellChanges sends the client notifications/tools/list_changed for each
// signal on changed, until Serve quits, and then for one still pending,
// so none told before the end is lost; it closes told when it returns.
func (c *conn) tellChanges(changed <-chan struct{}, told chan<- struct{}) {
	defer close(told)
	tell := func() { c.w.send(append(getBuffer(), mcp.ToolsListChanged...)) }
	for {
		select {
		case <-changed:
			tell()
		case <-c.quit:
			select {
			case <-changed:
				tell()
			default:
			}
			return
		}
	}
}

// job is one request handed to a worker.
type job struct {
	m   *jsonrpc.Message
	req *inflight.Request
}

// read is the single reader: it frames lines, parses them, and starts
// requests.
func (c *conn) read(ctx context.Context, in io.Reader) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, c.opt.MaxMessageBytes)
		if tooLong {
			c.w.send(jsonrpc.AppendError(nil, []byte("null"), &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: "Invalid Request: message longer than " + strconv.Itoa(c.opt.MaxMessageBytes) + " bytes"}))
		} else if len(bytes.TrimSpace(line)) > 0 {
			c.dispatch(ctx, line)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// readLine returns the next line without its newline, copied so it may
// outlive the next read. A line over max is consumed and reported as too
// long instead.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		var chunk []byte
		chunk, err = r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline does not count
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err != bufio.ErrBufferFull {
			break
		}
	}
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if len(line) > max {
		tooLong, line = true, nil
	}
	return line, tooLong, err
}

func (c *conn) dispatch(ctx context.Context, line []byte) {
	m, id, perr := jsonrpc.Parse(line)
	if perr != nil {
		c.w.send(jsonrpc.AppendError(nil, id, perr))
		return
	}
	switch m.Kind {
	case jsonrpc.KindResponse:
		return // nothing of ours awaits a client's reply
	case jsonrpc.KindNotification:
		if m.Method == "notifications/cancelled" {
			// The named request stops and its answer is not sent.
			c.inflight.Cancelled(m.Params)
		}
		return
	}
	if m.Method == "initialize" {
		// The handshake runs before the next line is read, so a request
		// pipelined right behind initialize sees the session initialized;
		// and initialize cannot be cancelled.
		c.w.send(c.handle(ctx, m, getBuffer()))
		return
	}
	j := &job{m: m, req: c.inflight.Start(c.values, m.ID)}
	select {
	case c.jobs <- j:
	case <-c.quit:
		c.inflight.Finish(j.req)
	}
}

// work runs requests until Serve stops it with a nil job. A plain
// receive, not a select with quit: it is paid on every request.
func (c *conn) work() {
	defer c.workers.Done()
	for j := range c.jobs {
		if j == nil {
			return
		}
		c.run(j)
	}
}

func (c *conn) run(j *job) {
	ctx := j.req.Context()
	resp := c.handle(ctx, j.m, getBuffer())
	cancelled := ctx.Err() != nil
	c.inflight.Finish(j.req) // whatever the handler started on ctx stops with it
	if !cancelled && resp != nil {
		c.w.send(resp)
	} else {
		putBuffer(resp)
	}
}

// handle runs one request; a panic becomes an internal error for that
// request alone.
func (c *conn) handle(ctx context.Context, m *jsonrpc.Message, buf []byte) (resp []byte) {
	defer func() {
		if r := recover(); r != nil {
			c.opt.Log.Error("request panicked", "method", jsonrpc.Brief(m.Method), "panic", r, "stack", string(debug.Stack()))
			resp = jsonrpc.AppendError(buf[:0], m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"})
		}
	}()
	return c.sess.Handle(ctx, m, buf)
}

// writer serializes output lines.
type writer struct {
	mu        sync.Mutex
	cond      *sync.Cond // signalled when a message is queued or on close
	space     *sync.Cond // broadcast when written messages free room
	queue     [][]byte
	unwritten int // queued, or taken by loop and not yet written
	limit     int
	// unwrittenBytes is the size of those messages. Counting messages
	// alone bounds memory only as far as each answer is small; the byte
	// budget holds whatever their size.
	unwrittenBytes int
	waiting        int // sends blocked until unwritten drops below limit
	closed         bool
	done           chan struct{}
	out            *bufio.Writer
	err            error
}

func newWriter(out io.Writer, limit int) *writer {
	w := &writer{done: make(chan struct{}), out: bufio.NewWriterSize(out, 64<<10), limit: limit}
	w.cond = sync.NewCond(&w.mu)
	w.space = sync.NewCond(&w.mu)
	return w
}

// MaxQueuedBytes bounds the answers waiting to be written on one
// connection, in bytes. One answer larger than it still goes out, alone.
const MaxQueuedBytes = 8 << 20

// send queues one message; after close it is dropped. While limit
// messages, or MaxQueuedBytes, wait to be written it blocks: a client that
// stops reading its answers stops the workers, and then the reader.
func (w *writer) send(msg []byte) {
	w.mu.Lock()
	for (w.unwritten >= w.limit || w.unwritten > 0 && w.unwrittenBytes+len(msg) > MaxQueuedBytes) && !w.closed {
		w.waiting++
		if testHookSendBlocked != nil {
			testHookSendBlocked(w.waiting)
		}
		w.space.Wait()
		w.waiting--
	}
	if !w.closed {
		w.queue = append(w.queue, msg)
		w.unwritten++
		w.unwrittenBytes += len(msg)
		w.cond.Signal()
	}
	w.mu.Unlock()
}

// testHookSendBlocked, when set by a test, runs under the writer's lock
// each time a send starts waiting, with the number of sends now waiting.
var testHookSendBlocked func(waiting int)

func (w *writer) loop() {
	defer close(w.done)
	var batch [][]byte
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.closed {
			w.cond.Wait()
		}
		batch, w.queue = w.queue, batch[:0]
		closed := w.closed
		w.mu.Unlock()
		size := 0
		for _, msg := range batch {
			size += len(msg)
			if w.err == nil {
				_, w.err = w.out.Write(msg)
			}
			if w.err == nil {
				w.err = w.out.WriteByte('\n')
			}
			putBuffer(msg)
		}
		if len(batch) > 0 {
			w.mu.Lock()
			w.unwritten -= len(batch)
			w.unwrittenBytes -= size
			w.space.Broadcast()
			w.mu.Unlock()
		}
		clear(batch)
		if len(batch) > 0 && !closed && w.pending() == 0 {
			// Let handlers finishing on other goroutines add to this write
			// before paying for a system call; when nothing else is
			// runnable this returns at once.
			runtime.Gosched()
		}
		if w.pending() == 0 && w.err == nil {
			w.err = w.out.Flush()
		}
		if closed && len(batch) == 0 {
			return // nothing can be queued after close, and the flush above ran
		}
	}
}

// pending is how many messages wait to be written.
func (w *writer) pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue)
}

// close flushes everything queued and stops the writer.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.cond.Signal()
	w.space.Broadcast()
	w.mu.Unlock()
	<-w.done
}
