package matcher

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHitHeapKeepsTheBest: whatever the order hits are offered in, the heap
// keeps the k best, whether it fills or not.
func TestHitHeapKeepsTheBest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := newScratch(0)
	for n := range 70 {
		for _, k := range []int{0, 1, 5, 13, max(n-1, 0), n, n + 8} {
			in := shuffledHits(r, n)
			h := hitHeap{items: make([]hit, 0, k), k: k}
			for _, v := range in {
				h.offer(v)
			}
			got := h.items
			sortHits(got, s)
			want := slices.Clone(in)
			slices.SortFunc(want, byHitScore)
			want = want[:min(k, n)]
			if !slices.EqualFunc(got, want, func(a, b hit) bool { return a.cat == b.cat }) {
				t.Fatalf("n=%d k=%d: kept %v, want %v", n, k, got, want)
			}
		}
	}
}

// TestHitHeapWorstOnTopOnceFull: from the offer that fills it on, the
// heap's first item is the worst it keeps, which top compares the next
// category's bound with.
func TestHitHeapWorstOnTopOnceFull(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{1, 2, 5, 13, 40} {
		in := shuffledHits(r, 3*k)
		h := hitHeap{items: make([]hit, 0, k), k: k}
		for i, v := range in {
			h.offer(v)
			if !h.full() {
				continue
			}
			worst := slices.MaxFunc(h.items, byHitScore)
			if h.items[0].cat != worst.cat {
				t.Fatalf("k=%d after %d offers: first %v, worst %v", k, i+1, h.items[0].Scored, worst.Scored)
			}
		}
	}
}

// BenchmarkHitHeap: offering a list's hits to the heap, one that the
// list never fills (a long list: MatchMore's, the whole registry asked
// for) and one it overflows (a short list's candidates).
func BenchmarkHitHeap(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ n, k int }{{24, 32}, {40, 13}} {
		in := shuffledHits(r, c.n)
		items := make([]hit, 0, c.k)
		b.Run(fmt.Sprintf("%d-into-%d", c.n, c.k), func(b *testing.B) {
			for b.Loop() {
				h := hitHeap{items: items[:0], k: c.k}
				for _, v := range in {
					h.offer(v)
				}
			}
		})
	}
}
