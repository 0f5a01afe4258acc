package matcher

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSemOnlyKeepsWhatHitHeapKept: blend's heap of semOnly keys keeps
// the categories a hitHeap of their hits kept, scores tied often, at
// the sizes blend asks for.
func TestSemOnlyKeepsWhatHitHeapKept(t *testing.T) {
	s := newSynth(5, 2_000)
	x := Build(s.categories(300))
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		k := []int{semExtra, 200, 300}[round%3]
		keys := best[semOnly]{items: make([]semOnly, 0, k), k: k, worse: x.semOnlyWorse}
		hits := hitHeap{items: make([]hit, 0, k), k: k}
		for _, c := range rng.Perm(x.Len())[:rng.IntN(x.Len())] {
			v := semOnly{score: float64(rng.IntN(20)) / 20, cat: uint32(c)}
			keys.offer(v)
			hits.offer(hit{Scored: Scored{Slug: x.slugs[c], Score: v.score}, cat: uint32(c)})
		}
		var got, want []uint32
		for _, v := range keys.items {
			got = append(got, v.cat)
		}
		for _, h := range hits.items {
			want = append(want, h.cat)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d, k %d: kept %v, the hit heap %v", round, k, got, want)
		}
	}
}
