package stdio

import "sync"

// Response buffers are recycled once written: with many requests in
// flight they would otherwise be most of the garbage the server makes.
// They are kept in a free list of our own rather than a sync.Pool: the
// collector empties a pool every other cycle, and a small server's
// cycles come every few thousand requests, after each of which the 64
// requests in flight made 64 new buffers; and a slice put in a pool is
// boxed, an allocation per request of its own. It pays: stdio
// BenchmarkServePipelined/mix-v1 (the benchmark mix) allocates 26,835
// B/op with it and 31,155 without (+16%).
var buffers struct {
	mu    sync.Mutex
	free  [][]byte
	bytes int // the capacity of the buffers in free
}

const (
	// newBuffer is the capacity of a new buffer: a get_sources answer
	// fits in half of it.
	newBuffer = 4 << 10
	// maxPooledBuffer keeps a rare huge response from pinning its memory.
	maxPooledBuffer = 64 << 10
	// maxFreeBytes bounds what the free list holds: the buffers of the
	// requests in flight and the answers queued behind them (2 *
	// DefaultMaxInFlight of them at newBuffer), no more.
	maxFreeBytes = 2 * DefaultMaxInFlight * newBuffer
)

func getBuffer() []byte {
	buffers.mu.Lock()
	if n := len(buffers.free); n > 0 {
		b := buffers.free[n-1]
		buffers.free[n-1] = nil
		buffers.free = buffers.free[:n-1]
		buffers.bytes -= cap(b)
		buffers.mu.Unlock()
		return b
	}
	buffers.mu.Unlock()
	return make([]byte, 0, newBuffer)
}

func putBuffer(b []byte) {
	if b == nil || cap(b) > maxPooledBuffer {
		return
	}
	buffers.mu.Lock()
	if buffers.bytes+cap(b) <= maxFreeBytes {
		buffers.free = append(buffers.free, b[:0])
		buffers.bytes += cap(b)
	}
	buffers.mu.Unlock()
}
