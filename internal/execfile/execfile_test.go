package execfile

import (
	_ "embed"
	"testing"
	"unsafe"
)

//go:embed execfile.go
var self string

// TestReadsEmbeddedData checks that the bytes of an embedded file read
// from the executable are the bytes in memory, at every offset tried,
// and that a read past the region's end is refused.
func TestReadsEmbeddedData(t *testing.T) {
	r := Open(unsafe.Pointer(unsafe.StringData(self)), len(self))
	if r == nil {
		if Expected() {
			t.Fatal("Open found no region although /proc/self/maps is there")
		}
		t.Skip("the executable is not read as a file on this system")
	}
	for _, at := range []int{0, 1, 100, len(self) / 2, len(self) - 10} {
		b := make([]byte, min(37, len(self)-at))
		if !r.ReadAt(b, int64(at)) || string(b) != self[at:at+len(b)] {
			t.Fatalf("at %d: read %q, memory %q", at, b, self[at:at+len(b)])
		}
	}
	if r.ReadAt(make([]byte, 2), int64(len(self)-1)) {
		t.Error("a read past the end succeeded")
	}
}
