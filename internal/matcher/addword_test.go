package matcher

import (
	"slices"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
)

// TestAddWordIsGeneralPass: for every word of registrytest's questions
// (and the issue's) that meets one term, addWord leaves the accumulation
// passWord leaves, starting from the accumulation of the words before
// it: the same touched categories in the same order, bit for bit the
// same sums.
func TestAddWordIsGeneralPass(t *testing.T) {
	doc, x := generatedIndex(t, 2_000, 3)
	compared := 0
	for _, q := range append(registrytest.Queries(doc, 300, 3), "learn rust ownership", "meaning of the word serendipity") {
		p, err := x.parse(q)
		if err != nil {
			continue
		}
		general, fast := newScratch(x.Len()), newScratch(x.Len())
		for i := range p.words {
			w := &p.words[i]
			if len(w.cands) == 0 {
				continue
			}
			if len(w.cands) == 1 {
				x.addWord(w, fast)
				compared++
			} else {
				x.passWord(w, fast, false)
			}
			x.passWord(w, general, false)
			if !slices.Equal(fast.touched, general.touched) {
				t.Fatalf("%q, word %q: touched %v, the general pass %v", q, w.raw, fast.touched, general.touched)
			}
			for _, c := range general.touched {
				if fast.acc[c] != general.acc[c] || fast.matched[c] != general.matched[c] || fast.share[c] != general.share[c] {
					t.Fatalf("%q, word %q, category %d: %v %v %v, the general pass %v %v %v", q, w.raw, c, fast.acc[c], fast.matched[c], fast.share[c], general.acc[c], general.matched[c], general.share[c])
				}
			}
		}
	}
	if compared < 100 {
		t.Fatalf("only %d words compared", compared)
	}
}

// BenchmarkAccumulate is accumulate and selection alone, as MatchMore's rankings run
// it (at 5 and at 200 candidates, the accumulation cleared before each)
// on registrytest's questions over 100,000 categories, its heaviest
// part at that size; -short skips it (building the registry takes a
// while).
func BenchmarkAccumulate(b *testing.B) {
	if testing.Short() {
		b.Skip("100,000 categories")
	}
	doc, x := generatedIndex(b, 100_000, 1)
	var ps []*parsed
	for _, q := range append([]string{"learn rust ownership"}, registrytest.Queries(doc, 256, 1)...) {
		if p, err := x.parse(q); err == nil && p.total > 0 {
			ps = append(ps, p)
		}
	}
	s := newScratch(x.Len())
	for i := 0; b.Loop(); i++ {
		p := ps[i%len(ps)]
		for _, limit := range []int{5, 200} {
			s.clearAccumulated()
			x.accumulate(p, s, limit)
			x.selection(p, s)
		}
	}
	s.clearAccumulated()
}

// generatedIndex is the index of registrytest's registry of n categories
// from seed, with the document its questions (registrytest.Queries) are
// drawn from.
func generatedIndex(tb testing.TB, n int, seed uint64) (*gen.Registry, *Index) {
	tb.Helper()
	doc := registrytest.Generate(n, seed)
	reg, err := registry.LoadLimit(gen.EncodeRegistry(doc), 1<<30)
	if err != nil {
		tb.Fatal(err)
	}
	return doc, New(reg)
}
