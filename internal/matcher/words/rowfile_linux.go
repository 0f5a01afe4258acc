package words

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// rowReader returns a function that reads a row of the rows at p (n
// bytes, within the executable's own mapping) from the executable file,
// or nil if the file cannot be found, opened, or does not hold at that
// offset what memory does (checked on the data's first and last row).
func rowReader(p unsafe.Pointer, n int) func(id int32, buf []byte) bool {
	off, ok := fileOffset(uintptr(p))
	if !ok {
		return nil
	}
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return nil
	}
	fd := int(f.Fd())
	read := func(id int32, buf []byte) bool {
		at := off + int64(id)*rowDims
		got, err := syscall.Pread(fd, buf, at)
		return err == nil && got == len(buf)
	}
	mem := unsafe.Slice((*byte)(p), n)
	var buf [rowDims]byte
	for _, id := range []int32{0, int32(n/rowDims - 1)} {
		if !read(id, buf[:]) || !bytes.Equal(buf[:], mem[int(id)*rowDims:int(id+1)*rowDims]) {
			f.Close()
			return nil
		}
	}
	// f stays open for the life of the process; keeping it reachable
	// keeps its finalizer from closing fd.
	rowFileKeep = f
	return read
}

var rowFileKeep *os.File

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
