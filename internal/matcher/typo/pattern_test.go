package typo_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/matcher/typo"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// The bit-parallel distance equals the plain table's on every pair,
// including non-ASCII text and empty strings (patterns past 64 characters
// are computed by the table itself).
func TestPatternDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("abcde é世 ")
	word := func(n int) string {
		r := make([]rune, n)
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(r)
	}
	for range 20000 {
		a, b := word(rng.IntN(70)), word(rng.IntN(70))
		if got, want := typo.NewPattern([]rune(a)).Distance([]rune(b)), typo.Levenshtein([]rune(a), []rune(b)); got != want {
			t.Fatalf("%q vs %q: got %d, want %d", a, b, got, want)
		}
	}
}

// BenchmarkPattern is the old matcher's hot path on the benchmark mix
// (evalset.MixV1): each question, normalized, against every candidate
// string of the dev registry (slug, name and query patterns, normalized),
// with the bit-parallel Pattern and with the plain table it stands in for.
// One op is one question against all candidates.
func BenchmarkPattern(b *testing.B) {
	mix := evalset.MixV1("../../..")
	reg, err := registry.LoadFile(mix.Registry)
	if err != nil {
		b.Fatal(err)
	}
	questions, err := mix.Questions()
	if err != nil {
		b.Fatal(err)
	}
	var queries, cands [][]rune
	for _, q := range questions {
		queries = append(queries, []rune(strings.Join(textnorm.Tokens(q), " ")))
	}
	for _, c := range reg.Categories() {
		for _, s := range append([]string{strings.ReplaceAll(c.Slug, "-", " "), c.Name}, c.QueryPatterns...) {
			if n := []rune(textnorm.Normalize(s)); len(n) > 0 && !slices.ContainsFunc(cands, func(c []rune) bool { return slices.Equal(c, n) }) {
				cands = append(cands, n)
			}
		}
	}
	sum := 0
	b.Run("bit-parallel", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			var p typo.Pattern
			p.Init(queries[i%len(queries)])
			for _, c := range cands {
				sum += p.Distance(c)
			}
			i++
		}
		b.ReportMetric(float64(len(cands)), "candidates")
	})
	b.Run("table", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			q := queries[i%len(queries)]
			for _, c := range cands {
				sum += typo.Levenshtein(q, c)
			}
			i++
		}
	})
	_ = sum
}
