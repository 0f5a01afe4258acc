//go:build unix

package words

import (
	"syscall"
	"unsafe"
)

// table returns n zeroed values of T in memory mapped for the life of the
// process, outside the collector's heap, or on the heap if the mapping
// fails. Only tables that hold no pointers may live there: the collector
// never looks inside it.
func table[T number](n int) []T {
	var zero T
	size := n * int(unsafe.Sizeof(zero))
	if size == 0 || heapTables {
		return make([]T, n)
	}
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]T, n)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
