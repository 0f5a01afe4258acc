package execfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"sync"
	"syscall"
	"unsafe"
)

// exe is /proc/self/exe, opened on first use and kept open: the file the
// process runs, even if it has since been renamed or replaced.
var exe = sync.OnceValue(func() *os.File {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return nil
	}
	return f
})

func open(addr uintptr, n int) *Region {
	off, ok := fileOffset(addr)
	f := exe()
	if !ok || f == nil {
		return nil
	}
	return &Region{fd: int(f.Fd()), off: off, n: n}
}

func pread(fd int, b []byte, off int64) bool {
	for len(b) > 0 {
		got, err := syscall.Pread(fd, b, off)
		if err != nil || got <= 0 {
			return false
		}
		b, off = b[got:], off+int64(got)
	}
	return true
}

// fileOffset is where the byte at addr lies in the file mapped there, from
// /proc/self/maps; ok is false for memory no file backs.
func fileOffset(addr uintptr) (off int64, ok bool) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 6 {
			continue
		}
		lo, hi, found := bytes.Cut(fields[0], []byte("-"))
		if !found {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		pgoff, err3 := strconv.ParseUint(string(fields[2]), 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || uint64(addr) < start || uint64(addr) >= end {
			continue
		}
		if fields[5][0] != '/' {
			return 0, false
		}
		return int64(pgoff + uint64(addr) - start), true
	}
	return 0, false
}

// pageRange is the whole pages within the n bytes at p.
func pageRange(p unsafe.Pointer, n int) (lo, hi uintptr) {
	page := uintptr(os.Getpagesize())
	start := uintptr(p)
	lo, hi = (start+page-1)&^(page-1), (start+uintptr(n))&^(page-1)
	return lo, max(lo, hi)
}

// Release unmaps from the process the pages wholly within the n bytes at
// p, which must be data never written (embedded data), so that memory
// reads the same after it: for benchmarks that measure what reading
// makes resident.
func Release(p unsafe.Pointer, n int) error {
	lo, hi := pageRange(p, n)
	if hi == lo {
		return nil
	}
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_DONTNEED); e != 0 {
		return e
	}
	return nil
}

// Resident is how many bytes of the pages wholly within the n bytes at p
// the process has mapped (/proc/self/pagemap).
func Resident(p unsafe.Pointer, n int) (int, error) {
	lo, hi := pageRange(p, n)
	page := uintptr(os.Getpagesize())
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, (hi-lo)/page*8)
	if _, err := f.ReadAt(buf, int64(lo/page*8)); err != nil {
		return 0, err
	}
	resident := 0
	for i := 0; i < len(buf); i += 8 {
		if binary.LittleEndian.Uint64(buf[i:])&(1<<63) != 0 {
			resident += int(page)
		}
	}
	return resident, nil
}

func expected() bool {
	_, err := os.Stat("/proc/self/maps")
	return err == nil
}
