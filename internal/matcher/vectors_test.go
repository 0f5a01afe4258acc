package matcher

import (
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/registry"
)

// cat is a test category with what the curator wrote about it.
func cat(slug, name, desc string, patterns ...string) registry.Category {
	return registry.Category{Slug: slug, Category: &gen.Category{Name: name, Description: desc, QueryPatterns: patterns}}
}

// The semantic channel puts the category a paraphrase is about among the
// candidates when no word of it is the curator's, and never makes it a
// confident answer on its own.
func TestSemanticCandidates(t *testing.T) {
	x := Build([]registry.Category{
		cat("sourdough", "Sourdough Bread", "Baking bread with a starter.", "sourdough starter", "bread baking", "shaping a loaf"),
		cat("index-funds", "Index Funds", "Investing in low-cost index funds.", "index funds", "etf portfolio", "asset allocation"),
		cat("kayaking", "Kayaking", "Paddling a kayak on rivers and the sea.", "kayak strokes", "sea kayak", "kayak rescue"),
	})
	if len(x.simTerms) == 0 {
		t.Fatal("no registry term has a word vector")
	}
	// Neither word is the curator's, nor linked by WordNet to one: only
	// word vectors know what they are about.
	for query, want := range map[string]string{"vanguard dividends": "index-funds", "brioche": "sourdough"} {
		top, err := x.Match(query, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(top) == 0 || top[0].Slug != want || top[0].Score >= 0.4 {
			t.Errorf("%s: got %v, want %s first and below the threshold", query, top, want)
		}
	}
}
