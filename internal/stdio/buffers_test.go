package stdio

import "testing"

// TestBufferFreeList checks the response buffers' free list: a buffer put
// back is the one handed out next, emptied; one larger than
// maxPooledBuffer is dropped; and the list keeps no more than
// maxFreeBytes however many are put back.
func TestBufferFreeList(t *testing.T) {
	drain := func() {
		for {
			buffers.mu.Lock()
			n := len(buffers.free)
			buffers.mu.Unlock()
			if n == 0 {
				return
			}
			getBuffer()
		}
	}
	drain()
	b := append(getBuffer(), "answer"...)
	putBuffer(b)
	if got := getBuffer(); len(got) != 0 || cap(got) != cap(b) || &got[:1][0] != &b[0] {
		t.Errorf("the buffer put back was not handed out again, emptied (len %d, cap %d)", len(got), cap(got))
	}
	putBuffer(make([]byte, 0, maxPooledBuffer+1))
	if buffers.bytes != 0 {
		t.Errorf("a buffer over maxPooledBuffer was kept (%d bytes)", buffers.bytes)
	}
	for range 3 * maxFreeBytes / newBuffer {
		putBuffer(make([]byte, 0, newBuffer))
	}
	if buffers.bytes != maxFreeBytes || len(buffers.free) != maxFreeBytes/newBuffer {
		t.Errorf("free list holds %d buffers, %d bytes; want at most %d bytes", len(buffers.free), buffers.bytes, maxFreeBytes)
	}
	drain()
}
