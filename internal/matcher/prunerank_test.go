package matcher

import (
	"slices"
	"testing"

	"github.com/three-good-sources/3gs/internal/registry/registrytest"
)

// TestPrunedSelectionIsWhole: a ranking of more than maxAssured
// candidates, which prunes at the (maxFinish+1)-th floor (pruneRank),
// selects exactly what the whole accumulation (never pruned) selects:
// the same categories in the same order, the same best bound of the
// others and the same fields, on a generated registry (registrytest's
// questions, off-topic and misspelt ones among them) and a synthetic one
// with common-word questions, at the long lists' limits.
func TestPrunedSelectionIsWhole(t *testing.T) {
	doc, x := generatedIndex(t, 3_000, 7)
	syn := newSynth(11, 4_000)
	cats := syn.categories(2_000)
	synQueries := syn.queries(cats, 200)
	for i := range 60 {
		synQueries = append(synQueries, syn.common[i%20]+" "+syn.common[(i*7)%50]+" "+syn.topic[i], syn.common[i%5]+" "+syn.common[i%3])
	}
	for _, c := range []struct {
		name    string
		x       *Index
		queries []string
	}{
		{"registrytest-3000", x, append(registrytest.Queries(doc, 400, 7), "learn rust ownership", "meaning of the word serendipity")},
		{"synth-2000", Build(cats), synQueries},
	} {
		pruned := 0
		for _, q := range c.queries {
			p, err := c.x.parse(q)
			if err != nil || p.total == 0 {
				continue
			}
			whole := newScratch(c.x.Len())
			c.x.accumulate(p, whole, -1)
			want := c.x.selection(p, whole)
			for _, limit := range []int{maxAssured + 1, maxFinish, 200, c.x.Len()} {
				s := newScratch(c.x.Len())
				if pruned1, _ := c.x.accumulate(p, s, limit); pruned1 {
					pruned++
				}
				got := c.x.selection(p, s)
				if !slices.Equal(got.byUB, want.byUB) || got.maxDropped != want.maxDropped || !slices.Equal(got.rows, want.rows) {
					t.Fatalf("%s: %q at limit %d: selected %v (best dropped %v), the whole accumulation %v (%v)", c.name, q, limit, got.byUB, got.maxDropped, want.byUB, want.maxDropped)
				}
			}
		}
		t.Logf("%s: %d of %d rankings pruned", c.name, pruned, 4*len(c.queries))
		if pruned < 40 {
			t.Fatalf("%s: only %d rankings pruned: the test proves too little", c.name, pruned)
		}
	}
}
