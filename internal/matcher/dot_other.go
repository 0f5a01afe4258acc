//go:build !amd64

package matcher

// dotRows sets out[i] to the dot product of q with row i of rows (each
// len(q) long); len(out) rows are read.
func dotRows(q, rows []int8, out []int32) { dotRowsGo(q, rows, out) }
