package app

import (
	"errors"
	"io"
	"os"
	"strconv"
	"syscall"
)

// stdioPipes returns the reader and writer `serve` answers on. When stdin
// or stdout is a pipe (as MCP hosts start servers), it is reopened through
// /proc/self/fd as a non-blocking file of this process's own: the Go
// runtime then waits for it in its poller, as for a socket, instead of
// parking a thread in read(2) or write(2). A thread blocked in a system
// call has its processor handed off, and the runtime's monitor polls every
// 20 µs while that keeps happening; under pipelined load that cost about a
// tenth of the server's CPU. Reopening makes a new open file description,
// so the non-blocking mode is not imposed on the one the parent (or a
// sibling) shares. Anything else, or any failure, is served as it is.
// close releases what was opened.
func stdioPipes(in io.Reader, out io.Writer) (io.Reader, io.Writer, func()) {
	var closers []*os.File
	if f, ok := in.(*os.File); ok {
		if g := reopenPipe(f, os.O_RDONLY); g != nil {
			in, closers = g, append(closers, g)
		}
	}
	if f, ok := out.(*os.File); ok {
		if g := reopenPipe(f, os.O_WRONLY); g != nil {
			out, closers = &pipeWriter{f: g, orig: f}, append(closers, g)
		}
	}
	return in, out, func() {
		for _, f := range closers {
			f.Close()
		}
	}
}

// reopenPipe opens f anew, non-blocking, when it is a pipe; else nil.
func reopenPipe(f *os.File, mode int) *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return nil
	}
	g, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), mode|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	return g
}

// pipeWriter writes to the reopened stdout. Once the reader has gone
// (EPIPE), the rest is written to the original file, so that a server
// whose client closed its end ends as before: os.Stdout's write fails
// with EPIPE too, and the Go runtime then raises SIGPIPE for fd 1.
type pipeWriter struct {
	f, orig *os.File
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	if err != nil && errors.Is(err, syscall.EPIPE) {
		m, err := w.orig.Write(b[n:])
		return n + m, err
	}
	return n, err
}
