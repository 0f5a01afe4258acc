package matcher

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// shuffledHits is n hits with scores drawn from a few values (ties,
// which the slug breaks, are common in a long list), in random order.
func shuffledHits(r *rand.Rand, n int) []hit {
	hits := make([]hit, n)
	for i := range hits {
		hits[i] = hit{Scored: Scored{Slug: fmt.Sprintf("cat-%03d", r.IntN(1000)*1000+i), Score: float64(r.IntN(6)) / 10}, cat: uint32(i)}
	}
	return hits
}

func TestSortHitsIsSortFunc(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	s := newScratch(0)
	for n := range 70 {
		for range 20 {
			got := shuffledHits(r, n)
			want := slices.Clone(got)
			slices.SortFunc(want, byHitScore)
			sortHits(got, s)
			for i := range got {
				if got[i].cat != want[i].cat {
					t.Fatalf("n=%d: position %d holds %v, want %v", n, i, got[i].Scored, want[i].Scored)
				}
			}
		}
	}
}

// BenchmarkSortHits: sorting the positions of a long list's hits and
// moving each once, against sorting the 160-byte hits in place.
func BenchmarkSortHits(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{13, 40} {
		in := shuffledHits(r, n)
		hits := make([]hit, n)
		b.Run(fmt.Sprintf("sort-func/%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(hits, in)
				slices.SortFunc(hits, byHitScore)
			}
		})
		s := newScratch(0)
		b.Run(fmt.Sprintf("sort-hits/%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(hits, in)
				sortHits(hits, s)
			}
		})
	}
}
