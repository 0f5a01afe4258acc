package match

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"

	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// Baseline is the first matcher: whole-string edit similarity against a few
// short strings per category, plus a bonus for slug words in the query.
//
//	score = 0.7 · max similarity(query, candidate) + 0.3 · slug words found / slug words
//
// where candidates are the slug with spaces, the name and every query
// pattern, all normalized like the query, and similarity is
// 1 − Levenshtein distance / length of the longer string (in characters).
type Baseline struct {
	cats []baselineCategory
}

type baselineCategory struct {
	slug       string
	candidates []string
	slugWords  []string
}

// Weights of the two parts of a baseline score.
const (
	similarityWeight = 0.7
	slugWordWeight   = 0.3
)

// NewBaseline precomputes everything that depends only on the registry.
func NewBaseline(r *registry.Registry) *Baseline {
	b := &Baseline{}
	for _, c := range r.Categories() {
		bc := baselineCategory{slug: c.Slug, slugWords: strings.Split(c.Slug, "-")}
		add := func(s string) {
			if n := textnorm.Normalize(s); n != "" && !slices.Contains(bc.candidates, n) {
				bc.candidates = append(bc.candidates, n)
			}
		}
		add(strings.ReplaceAll(c.Slug, "-", " "))
		add(c.Name)
		for _, p := range c.QueryPatterns {
			add(p)
		}
		b.cats = append(b.cats, bc)
	}
	return b
}

// Match implements Matcher.
func (b *Baseline) Match(query string) ([]Scored, error) {
	if strings.TrimSpace(query) == "" {
		return nil, ErrEmptyQuery
	}
	tokens := textnorm.Tokens(query)
	if len(tokens) == 0 {
		return nil, ErrOnlyStopWords
	}
	norm := strings.Join(tokens, " ")
	out := make([]Scored, 0, len(b.cats))
	for _, c := range b.cats {
		best := 0.0
		for _, cand := range c.candidates {
			best = max(best, similarity(norm, cand))
		}
		found := 0
		for _, w := range c.slugWords {
			if slices.Contains(tokens, w) {
				found++
			}
		}
		score := similarityWeight*best + slugWordWeight*float64(found)/float64(len(c.slugWords))
		out = append(out, Scored{Slug: c.slug, Score: min(score, 1)})
	}
	slices.SortFunc(out, byScore)
	return out, nil
}

// similarity is 1 − edit distance / length of the longer string.
func similarity(a, b string) float64 {
	longest := max(utf8.RuneCountInString(a), utf8.RuneCountInString(b))
	if longest == 0 {
		return 1
	}
	return 1 - float64(levenshtein.ComputeDistance(a, b))/float64(longest)
}
