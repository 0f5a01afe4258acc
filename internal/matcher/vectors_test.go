package matcher

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/registry"
)

// The vectors load, and words of one topic are closer than words of
// different topics; an unknown word has none.
func TestWordVectors(t *testing.T) {
	id := func(w string) int32 {
		v := vectorOf(w)
		if v < 0 {
			t.Fatalf("no vector for %q", w)
		}
		return v
	}
	for _, c := range []struct{ a, near, far string }{
		{"bread", "dough", "mortgage"},
		{"espresso", "coffee", "telescope"},
		{"kayak", "canoe", "spreadsheet"},
	} {
		near, far := cosine(id(c.a), id(c.near)), cosine(id(c.a), id(c.far))
		if near <= far || near < 0.4 {
			t.Errorf("%s: %s %.2f, %s %.2f", c.a, c.near, near, c.far, far)
		}
	}
	if vectorOf("qzxvbnmw") >= 0 {
		t.Error("a made-up word has a vector")
	}
	if c := cosine(id("bread"), id("bread")); c < 0.999 || c > 1.001 {
		t.Errorf("cosine of a word with itself: %v", c)
	}
}

// The semantic channel puts the category a paraphrase is about among the
// candidates when no word of it is the curator's, and never makes it a
// confident answer on its own.
func TestSemanticCandidates(t *testing.T) {
	cat := func(slug, name, desc string, patterns ...string) registry.Category {
		return registry.Category{Slug: slug, Category: &gen.Category{Name: name, Description: desc, QueryPatterns: patterns}}
	}
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

// TestDotRows checks the assembly dot products against the Go loop on
// random rows, extremes included (-128·-128 in every dimension).
func TestDotRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dims := range []int{64, 50} {
		q := make([]int8, dims)
		rows := make([]int8, 37*dims)
		for i := range q {
			q[i] = int8(rng.IntN(256) - 128)
		}
		for i := range rows {
			rows[i] = int8(rng.IntN(256) - 128)
		}
		for i := range dims {
			rows[i] = -128 // row 0 against an all -128 query
		}
		q2 := slices.Repeat([]int8{-128}, dims)
		for _, q := range [][]int8{q, q2} {
			for _, n := range []int{0, 1, 2, 37} {
				got, want := make([]int32, n), make([]int32, n)
				dotRows(q, rows, got)
				dotRowsGo(q, rows, want)
				if !slices.Equal(got, want) {
					t.Fatalf("dims %d, %d rows: got %v, want %v", dims, n, got, want)
				}
			}
		}
	}
}
