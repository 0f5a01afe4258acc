//go:build !amd64

package words

// DotRows sets out[i] to the dot product of q with row i of rows (each
// len(q) long); len(out) rows are read.
func DotRows(q, rows []int8, out []int32) { dotRowsGo(q, rows, out) }
