package words

import (
	"slices"
	"testing"
)

// TestRowsFromFile checks that every row read from the executable (Row,
// through the row cache and its evictions, and AppendRow) equals the row
// in place, and that norms computed from either agree.
func TestRowsFromFile(t *testing.T) {
	Vector("the")
	v := &vectors
	if rowFile.read == nil {
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
