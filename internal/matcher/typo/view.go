package typo

import (
	"encoding/binary"
	"unsafe"
)

// littleEndian is whether the machine stores numbers as the binary form
// does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// view returns the little-endian numbers in s as a slice: s's own bytes
// where the machine is little-endian and s is aligned for T, a copy
// otherwise. The slice must not be written: it may be read-only memory.
func view[T uint8 | uint16 | uint32](s string) []T {
	size := int(unsafe.Sizeof(T(0)))
	n := len(s) / size
	if n == 0 {
		return nil
	}
	p := unsafe.StringData(s)
	if (littleEndian || size == 1) && uintptr(unsafe.Pointer(p))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(p)), n)
	}
	out := make([]T, n)
	for i := range out {
		if size == 2 {
			out[i] = T(binary.LittleEndian.Uint16([]byte(s[2*i:])))
		} else {
			out[i] = T(binary.LittleEndian.Uint32([]byte(s[4*i:])))
		}
	}
	return out
}
