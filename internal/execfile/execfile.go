// Package execfile reads data embedded in the running executable from
// the executable file, where the system allows, instead of from where it
// is mapped: a read in place makes the kernel map not the page read
// alone but the pages around it (fault-around, 64 KB by default), so a
// few hundred small reads scattered over a large embedded table leave
// most of it resident, while reading the file puts in memory only the
// bytes asked for. It imports nothing of the project.
package execfile

import "unsafe"

// A Region is embedded data read from the executable file.
type Region struct {
	fd  int
	off int64 // where the data begins in the file
	n   int
}

// Open returns the region of the executable file that holds the n bytes
// at p, which must be data of the executable itself (an embedded file),
// never written; nil where that cannot be found or read (another system,
// memory no file backs, a file that does not hold at that offset what
// memory does: checked on the data's first and last bytes, up to 64 of
// each). It opens the file once and keeps it open for the process.
func Open(p unsafe.Pointer, n int) *Region {
	if n == 0 {
		return nil
	}
	r := open(uintptr(p), n)
	if r == nil {
		return nil
	}
	mem := unsafe.Slice((*byte)(p), n)
	var buf [64]byte
	k := min(len(buf), n)
	for _, at := range []int{0, n - k} {
		if !r.ReadAt(buf[:k], int64(at)) || string(buf[:k]) != string(mem[at:at+k]) {
			return nil
		}
	}
	return r
}

// ReadAt fills b with the region's bytes from off; false if they could
// not all be read (or lie outside the region).
func (r *Region) ReadAt(b []byte, off int64) bool {
	if off < 0 || off+int64(len(b)) > int64(r.n) {
		return false
	}
	return pread(r.fd, b, r.off+off)
}

// Expected reports whether this system should let Open read the
// executable as a file (Linux with /proc mounted), so that a test can
// fail, not skip, when Open returns nil where it should not: the data
// would silently be read in place again, and every test still pass.
func Expected() bool { return expected() }
