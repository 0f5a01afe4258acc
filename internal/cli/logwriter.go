package cli

import (
	"io"
	"sync"
)

// logWriter hands the log lines written to it to one goroutine that writes
// whatever has accumulated in one call. An HTTP server logs a line per
// request, and a write system call per line cost more than the rest of
// serving a request outside matching (httpload, 64 clients: 3gs/go-sdk
// 2.79x with the access log on, 4.35x with it off). No line waits for a
// timer: when the server is idle a line is written at once; under load
// the lines that arrive during one write go out together in the next.
// At most maxPendingLog bytes wait; past that, Write blocks.
type logWriter struct {
	w       io.Writer
	mu      sync.Mutex
	ready   sync.Cond // signalled when a line is queued or on close
	space   sync.Cond // broadcast when queued bytes were written
	pending []byte
	spare   []byte
	closed  bool
	done    chan struct{}
}

const maxPendingLog = 1 << 20

func newLogWriter(w io.Writer) *logWriter {
	l := &logWriter{w: w, done: make(chan struct{})}
	l.ready.L, l.space.L = &l.mu, &l.mu
	go l.loop()
	return l
}

func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.w.Write(p)
	}
	for len(l.pending) > 0 && len(l.pending)+len(p) > maxPendingLog && !l.closed {
		l.space.Wait()
	}
	if l.closed {
		return l.w.Write(p)
	}
	l.pending = append(l.pending, p...)
	l.ready.Signal()
	return len(p), nil
}

func (l *logWriter) loop() {
	defer close(l.done)
	for {
		l.mu.Lock()
		for len(l.pending) == 0 && !l.closed {
			l.ready.Wait()
		}
		batch := l.pending
		l.pending, l.spare = l.spare[:0], nil
		closed := l.closed
		l.mu.Unlock()
		if len(batch) > 0 {
			l.w.Write(batch) // a log that cannot be written is not worth stopping the server for
		}
		l.mu.Lock()
		if cap(batch) <= maxPendingLog {
			l.spare = batch[:0]
		}
		l.space.Broadcast()
		l.mu.Unlock()
		if closed {
			return
		}
	}
}

// Close writes everything queued and returns once it is written; later
// writes go straight through.
func (l *logWriter) Close() error {
	l.mu.Lock()
	l.closed = true
	l.ready.Signal()
	l.space.Broadcast()
	l.mu.Unlock()
	<-l.done
	return nil
}
