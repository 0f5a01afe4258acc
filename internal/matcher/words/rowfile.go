package words

import (
	"github.com/three-good-sources/3gs/internal/execfile"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The rows of the word vectors are 6.4 MB of the binary's data, and a
// row read in place makes the kernel map not its page alone but the
// pages around it (fault-around, 64 KB by default): the thousand-odd rows
// a small registry's words and questions read, spread over all 100,000,
// left about 4 MB of them resident in a server that uses 64 KB. So where
// the executable can be read as a file (internal/execfile: Linux), a row
// is read from it, 64 bytes, into a small cache, and the rows in place
// are never touched; elsewhere, or if that fails, they are read in place
// as before. BenchmarkRowsResident measures both.

// rowSlots is the size of the row cache: rowWays-way by id, each entry
// immutable once stored, so a Row may be read while another goroutine
// replaces its slot. A registry's words with vectors number a few hundred
// to a few thousand, and the matcher copies their rows into its index
// (simRows, AppendRow); what it asks for later is the question's words.
const (
	rowSetBits = 10
	rowWays    = 4
	rowSlots   = rowWays << rowSetBits
)

// rowDims is the one row width the file path serves (the shipped vectors'
// 64); other widths are read in place.
const rowDims = 64

type rowEntry struct {
	id  int32
	row [rowDims]int8
}

var rowFile struct {
	once sync.Once
	// file is where rows are read from; nil when they are read in place.
	file  *execfile.Region
	cache [rowSlots]atomic.Pointer[rowEntry]
}

// readRowsInPlace makes Row read the embedded rows in place, for the
// benchmark and the test that compare the two ways.
var readRowsInPlace bool

// openRowFile sets rowFile.file, once, for rows (vectors.rows).
func openRowFile(rows []int8, dims int) {
	rowFile.once.Do(func() {
		if dims == rowDims {
			rowFile.file = execfile.Open(unsafe.Pointer(unsafe.SliceData(rows)), len(rows))
		}
	})
}

// Row is the vector of id: a copy read from the executable file where
// that is possible (see above), kept in the row cache, else a view of the
// embedded data. Either way it is never written. It is for the
// question's words; a registry's words are read once, with AppendRow.
func Row(id int32) []int8 {
	if rowFile.file == nil || readRowsInPlace {
		return inPlace(id)
	}
	// Four ways: id may sit in any slot of its set of four, so the few
	// words of a few hundred whose ids share the low bits (the birthday
	// problem) do not evict each other on every question.
	// The set is picked by a multiplicative hash of id: ids are ranks by
	// frequency, and their low bits alone crowded one set with six of
	// the benchmark's words.
	h := uint32(id) * 0x9e3779b1 >> (32 - rowSetBits)
	set := rowFile.cache[h*rowWays:][:rowWays]
	free := -1
	for k := range set {
		e := set[k].Load()
		if e == nil {
			if free < 0 {
				free = k
			}
			continue
		}
		if e.id == id {
			return e.row[:]
		}
	}
	e := &rowEntry{id: id}
	if !readRow(id, e.row[:]) {
		return inPlace(id)
	}
	if free < 0 {
		free = int(uint32(id) % rowWays) // a full set: one of the four goes
	}
	set[free].Store(e)
	return e.row[:]
}

// AppendRow appends the vector of id to dst, read as Row reads it but
// not kept in the row cache: an index copies its registry's rows once,
// and they would only push the question's words out of the cache.
func AppendRow(dst []int8, id int32) []int8 {
	if rowFile.file != nil && !readRowsInPlace {
		var row [rowDims]int8
		if readRow(id, row[:]) {
			return append(dst, row[:]...)
		}
	}
	return append(dst, inPlace(id)...)
}

// Dims is the length of a vector (0 when there are none).
func Dims() int {
	vectors.once.Do(loadVectors)
	return vectors.dims
}

// inPlace is row id, a view of the embedded data.
func inPlace(id int32) []int8 {
	v := &vectors
	return v.rows[int(id)*v.dims : int(id+1)*v.dims]
}

// readRow reads row id from the executable into row.
func readRow(id int32, row []int8) bool {
	return rowFile.file.ReadAt(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(row))), len(row)), int64(id)*rowDims)
}
