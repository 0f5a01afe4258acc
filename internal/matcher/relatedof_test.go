package matcher

import (
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/registry"
)

// mixRelatedStems are the stems of the benchmark mix's words that the
// registry's vocabulary lacks: the ones addRelated looks up.
func mixRelatedStems(tb testing.TB) (*Index, []string) {
	set := evalset.MixV1("../..")
	reg, err := registry.LoadFile(set.Registry)
	if err != nil {
		tb.Fatal(err)
	}
	qs, err := set.Questions()
	if err != nil {
		tb.Fatal(err)
	}
	x := New(reg)
	var stems []string
	for _, q := range qs {
		for _, w := range strings.Fields(strings.ToLower(q)) {
			st := stemQuery(strings.Trim(w, ",.?!'\""))
			if _, known := x.term(st); !known && st != "" && !isGeneric(st) {
				stems = append(stems, st)
			}
		}
	}
	if len(stems) == 0 {
		tb.Fatal("no stem of the mix is outside the vocabulary")
	}
	return x, stems
}

func TestRelatedOfIsFindRelated(t *testing.T) {
	x, stems := mixRelatedStems(t)
	for range 2 { // cold, then from the cache
		for _, st := range stems {
			want := x.findRelated(st, nil)
			if got := x.relatedOf(st); !slices.Equal(got, want) {
				t.Fatalf("relatedOf(%q) = %v, want %v", st, got, want)
			}
		}
	}
}

// BenchmarkRelatedOf: the related terms of the mix's words outside the
// vocabulary, found each time (find) against kept in relCache (cached).
func BenchmarkRelatedOf(b *testing.B) {
	x, stems := mixRelatedStems(b)
	b.Run("find", func(b *testing.B) {
		var buf [32]cand
		for i := 0; b.Loop(); i++ {
			x.findRelated(stems[i%len(stems)], buf[:0])
		}
	})
	b.Run("cached", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			x.relatedOf(stems[i%len(stems)])
		}
	})
}
