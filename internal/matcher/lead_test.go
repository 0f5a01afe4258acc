package matcher

import (
	"slices"
	"testing"

	"github.com/three-good-sources/3gs/internal/registry"
)

// leadByMeaning reorders only the grounded categories of a long list's
// head, by score plus closeness in meaning, and hands them the scores in
// their old order: a category without evidence keeps its place, and the
// list stays in score order.
func TestLeadByMeaning(t *testing.T) {
	const full = meaningScale * meaningScale
	mk := func(slug string, cat uint32, score float64, grounded bool) hit {
		return hit{Scored: Scored{Slug: slug, Score: score}, cat: cat, ev: evidence{grounded: grounded}}
	}
	out := []hit{
		mk("shares-a-word", 0, 0.30, true),
		mk("no-evidence", 1, 0.29, false),
		mk("about-it", 2, 0.28, true),
		mk("far", 3, 0.20, true),
	}
	// about-it is close in meaning to the question, shares-a-word is not:
	// 0.28 + 0.1*0.9 > 0.30 + 0.1*0.05.
	dots := []int32{full / 20, full, full * 9 / 10, 0}
	leadByMeaning(out, dots)
	var slugs []string
	var scores []float64
	for _, h := range out {
		slugs = append(slugs, h.Slug)
		scores = append(scores, h.Score)
	}
	if want := []string{"about-it", "no-evidence", "shares-a-word", "far"}; !slices.Equal(slugs, want) {
		t.Errorf("order %v, want %v", slugs, want)
	}
	if want := []float64{0.30, 0.29, 0.28, 0.20}; !slices.Equal(scores, want) {
		t.Errorf("scores %v, want %v", scores, want)
	}
}

// On a real registry, the long lists leadByMeaning reorders stay in
// score order (tiesBySlug sorts only runs of equal scores, so a reorder
// that broke the order would show here as a list out of order or as
// the same category's score moving between limits).
func TestLeadByMeaningKeepsScoreOrder(t *testing.T) {
	reg, err := registry.LoadFile("testdata/dev/registry.json")
	if err != nil {
		t.Fatal(err)
	}
	x := New(reg)
	for _, q := range []string{"my coffee tastes bitter and sour", "something about saving for later", "how do I fix a slow database", "bread that does not rise"} {
		long, err := x.Match(q, 100)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(long); i++ {
			if long[i].Score > long[i-1].Score {
				t.Errorf("%q: %s %.4f after %s %.4f", q, long[i].Slug, long[i].Score, long[i-1].Slug, long[i-1].Score)
			}
		}
	}
}
