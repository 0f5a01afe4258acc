//go:build !unix

package words

// table returns n zeroed values of T; on this system they are made on
// the heap.
func table[T number](n int) []T { return make([]T, n) }
