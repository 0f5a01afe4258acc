package words

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/three-good-sources/3gs/internal/execfile"
)

// TestRowsFromFile checks that every row read from the executable (Row,
// through the row cache and its evictions, and AppendRow) equals the row
// in place, and that norms computed from either agree.
func TestRowsFromFile(t *testing.T) {
	Vector("the")
	v := &vectors
	if rowFile.file == nil {
		if execfile.Expected() {
			t.Fatal("rows are read in place although the executable can be read as a file")
		}
		t.Skip("rows are read in place on this system")
	}
	n := int32(len(v.lens))
	for id := range n {
		want := inPlace(id)
		if got := Row(id); !slices.Equal(got, want) {
			t.Fatalf("Row(%d) = %v, in place %v", id, got, want)
		}
		if got := AppendRow(nil, id); !slices.Equal(got, want) {
			t.Fatalf("AppendRow(%d) = %v, in place %v", id, got, want)
		}
		if a, b := rowNorm(id), NormOf(want); a != b {
			t.Fatalf("norm of %d: %v from the file, %v in place", id, a, b)
		}
	}
}

// BenchmarkRowsResident measures what reading rows costs in resident
// memory and in time, reading them in place (in-place) and from the
// executable (file, as shipped on Linux): the rows of 1,500 words spread
// over the list, about a small registry's vocabulary, are read after the
// rows' pages are let go (execfile.Release), then resident-KB is how much
// of the rows' 6.4 MB the process has mapped; ns/op is a Row of one of
// 300 of those words, read before (from the file, a hit in the row
// cache, as a question's words are after the first time).
func BenchmarkRowsResident(b *testing.B) {
	Vector("the")
	v := &vectors
	if rowFile.file == nil {
		b.Skip("rows are read in place on this system")
	}
	p, size := unsafe.Pointer(unsafe.SliceData(v.rows)), len(v.rows)
	n := len(v.lens)
	ids := make([]int32, 1500)
	for i := range ids {
		ids[i] = int32(i * (n / len(ids)))
	}
	for _, mode := range []string{"in-place", "file"} {
		b.Run(mode, func(b *testing.B) {
			readRowsInPlace = mode == "in-place"
			defer func() { readRowsInPlace = false }()
			if err := execfile.Release(p, size); err != nil {
				b.Skip(err)
			}
			var sum int
			for _, id := range ids {
				sum += int(Row(id)[0])
			}
			resident, err := execfile.Resident(p, size)
			if err != nil {
				b.Skip(err)
			}
			i := 0
			for b.Loop() {
				sum += int(Row(ids[i%300])[0])
				i++
			}
			b.ReportMetric(float64(resident)/1024, "resident-KB")
			_ = sum
		})
	}
}
