package matcher

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/internal/matcher/typo"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

func baseline(t testing.TB) (*Baseline, *registry.Registry) {
	reg, err := registry.Load(threegs.DefaultRegistry)
	if err != nil {
		t.Fatal(err)
	}
	return NewBaseline(reg), reg
}

// The pruned search must give exactly what trying every candidate gives.
func TestBestSimilarityEqualsExhaustive(t *testing.T) {
	b, reg := baseline(t)
	var words []string
	for _, c := range reg.Categories() {
		for _, p := range c.QueryPatterns {
			words = append(words, textnorm.Tokens(p)...)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		n := 1 + rng.IntN(6)
		var q []string
		for range n {
			q = append(q, words[rng.IntN(len(words))])
		}
		if i%3 == 0 { // typos
			w := []byte(q[0])
			w[rng.IntN(len(w))] = 'z'
			q[0] = string(w)
		}
		query := strings.Join(q, " ")
		qlen := utf8.RuneCountInString(query)
		for _, c := range b.cats {
			want := 0.0
			for _, cand := range c.candidates {
				longest := max(qlen, cand.length)
				want = max(want, 1-float64(typo.Levenshtein([]rune(query), []rune(cand.text)))/float64(longest))
			}
			if got := bestSimilarity(typo.NewPattern([]rune(query)), c.candidates); got != want {
				t.Fatalf("%q vs %s: pruned %v, exhaustive %v", query, c.slug, got, want)
			}
		}
	}
}

func TestBaselineFindsParaphrases(t *testing.T) {
	b, _ := baseline(t)
	for query, want := range map[string]string{
		"How can I learn the Rust programming language?": "rust-learning",
		"harden my linux server":                         "linux-server-hardening",
		"kubernetes tutorial":                            "kubernetes-basics",
		"which password manager should I use":            "password-management",
	} {
		ranked, err := b.Match(query, 3)
		if err != nil || ranked[0].Slug != want || ranked[0].Score < 0.4 {
			t.Errorf("%q: got %v %v, want %s above 0.4", query, ranked[:2], err, want)
		}
	}
	ranked, _ := b.Match("quantum physics supercollider", 3)
	if len(ranked) > 0 && ranked[0].Score >= 0.4 {
		t.Errorf("off-topic query scored %v", ranked[0])
	}
	if _, err := b.Match("  \t", 3); !errors.Is(err, ErrEmptyQuery) {
		t.Errorf("blank query: %v", err)
	}
	if _, err := b.Match("how do I do it?", 3); !errors.Is(err, ErrOnlyStopWords) {
		t.Errorf("stop words only: %v", err)
	}
}

func BenchmarkBaselineMatch(b *testing.B) {
	m, _ := baseline(b)
	qs := []string{"how do I run a bitcoin full node", "self host my email server", "learn rust ownership", "harden ssh on linux"}
	i := 0
	for b.Loop() {
		if _, err := m.Match(qs[i%len(qs)], 1); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
