package words

import (
	"encoding/binary"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// BenchmarkRowsResident measures what reading rows costs in resident
// memory and in time, reading them in place (in-place) and from the
// executable (file, as shipped on Linux): the rows of 1,500 words spread
// over the list, about a small registry's vocabulary, are read after the
// rows' pages are let go (madvise DONTNEED: the rows are never written,
// so memory reads the same after it), then resident-KB is how much of the
// rows' 6.4 MB the process then has mapped (/proc/self/pagemap); ns/op is
// a Row of one of 300 of those words, read before (from the file, a hit
// in the row cache, as a question's words are after the first time).
func BenchmarkRowsResident(b *testing.B) {
	Vector("the")
	v := &vectors
	if rowFile.read == nil {
		b.Skip("rows are read in place on this system")
	}
	n := len(v.lens)
	ids := make([]int32, 1500)
	for i := range ids {
		ids[i] = int32(i * (n / len(ids)))
	}
	for _, mode := range []string{"in-place", "file"} {
		b.Run(mode, func(b *testing.B) {
			readRowsInPlace = mode == "in-place"
			defer func() { readRowsInPlace = false }()
			release(b, v.rows)
			var sum int
			for _, id := range ids {
				sum += int(Row(id)[0])
			}
			resident := residentBytes(b, v.rows)
			i := 0
			for b.Loop() {
				sum += int(Row(ids[i%300])[0])
				i++
			}
			b.ReportMetric(float64(resident)/1024, "resident-KB")
			_ = sum
		})
	}
}

// pageRange is the whole pages within s.
func pageRange(s []int8) (lo, hi uintptr) {
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	return (start + page - 1) &^ (page - 1), (start + uintptr(len(s))) &^ (page - 1)
}

// release unmaps the pages wholly within s from this process.
func release(b *testing.B, s []int8) {
	lo, hi := pageRange(s)
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_DONTNEED); e != 0 {
		b.Fatal(e)
	}
}

// residentBytes is how much of the pages wholly within s is mapped into
// this process.
func residentBytes(b *testing.B, s []int8) int {
	lo, hi := pageRange(s)
	page := uintptr(os.Getpagesize())
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		b.Skip(err)
	}
	defer f.Close()
	buf := make([]byte, (hi-lo)/page*8)
	if _, err := f.ReadAt(buf, int64(lo/page*8)); err != nil {
		b.Fatal(err)
	}
	resident := 0
	for i := 0; i < len(buf); i += 8 {
		if binary.LittleEndian.Uint64(buf[i:])&(1<<63) != 0 {
			resident += int(page)
		}
	}
	return resident
}
