package words

// dotRows64 sets out[i] to the dot product of the 64 int8 of q with row i
// of rows (n rows of 64, contiguous), with SSE2, which every amd64 has.
// The sums are exact integers, so they equal dotRowsGo's.
//
//go:noescape
func dotRows64(q, rows *int8, n int, out *int32)

// DotRows sets out[i] to the dot product of q with row i of rows (each
// len(q) long); len(out) rows are read.
func DotRows(q, rows []int8, out []int32) {
	if len(q) != 64 || len(out) == 0 {
		dotRowsGo(q, rows, out)
		return
	}
	_ = rows[len(out)*64-1]
	dotRows64(&q[0], &rows[0], len(out), &out[0])
}
