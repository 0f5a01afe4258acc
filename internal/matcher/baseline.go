package matcher

import (
	"slices"
	"strings"

	"github.com/three-good-sources/3gs/internal/matcher/typo"
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
	candidates []candidate // sorted by length
	slugWords  []string
}

type candidate struct {
	text   string
	runes  []rune
	length int // len(runes)
}

// Weights of the two parts of a baseline score.
const (
	similarityWeight = 0.7
	slugWordWeight   = 0.3
)

// NewBaseline precomputes everything that depends only on the registry.
func NewBaseline(r *registry.Registry) *Baseline { return BuildBaseline(r.Categories()) }

// BuildBaseline is NewBaseline for categories without a registry file.
func BuildBaseline(cats []registry.Category) *Baseline {
	b := &Baseline{}
	for _, c := range cats {
		bc := baselineCategory{slug: c.Slug, slugWords: strings.Split(c.Slug, "-")}
		add := func(s string) {
			n := textnorm.Normalize(s)
			if n != "" && !slices.ContainsFunc(bc.candidates, func(c candidate) bool { return c.text == n }) {
				r := []rune(n)
				bc.candidates = append(bc.candidates, candidate{n, r, len(r)})
			}
		}
		add(strings.ReplaceAll(c.Slug, "-", " "))
		add(c.Name)
		for _, p := range c.QueryPatterns {
			add(p)
		}
		slices.SortFunc(bc.candidates, func(a, b candidate) int { return a.length - b.length })
		b.cats = append(b.cats, bc)
	}
	return b
}

// Match implements Matcher.
func (b *Baseline) Match(query string, limit int) ([]Scored, error) {
	if strings.TrimSpace(query) == "" {
		return nil, ErrEmptyQuery
	}
	tokens := textnorm.Tokens(query)
	if len(tokens) == 0 {
		return nil, ErrOnlyStopWords
	}
	var q typo.Pattern
	q.Init([]rune(strings.Join(tokens, " ")))
	out := make([]Scored, 0, len(b.cats))
	for _, c := range b.cats {
		best := bestSimilarity(&q, c.candidates)
		found := 0
		for _, w := range c.slugWords {
			if slices.Contains(tokens, w) {
				found++
			}
		}
		score := similarityWeight*best + slugWordWeight*float64(found)/float64(len(c.slugWords))
		out = append(out, Scored{Slug: c.slug, Score: min(score, 1), Grounded: found > 0 || c.shares(tokens)})
	}
	slices.SortFunc(out, byScore)
	for len(out) > 0 && out[len(out)-1].Score == 0 {
		out = out[:len(out)-1]
	}
	return out[:min(len(out), max(limit, 0))], nil
}

// shares reports whether one of the query's tokens is a whole word of one
// of c's strings: the baseline's evidence (Scored.Grounded). Its
// similarity is above zero for any two strings, so it cannot say that.
func (c *baselineCategory) shares(tokens []string) bool {
	for _, cd := range c.candidates {
		for w := range strings.FieldsSeq(cd.text) {
			if slices.Contains(tokens, w) {
				return true
			}
		}
	}
	return false
}

// bestSimilarity is the highest similarity between q (qlen characters) and
// any of cands, which are sorted by length. The edit distance is at least
// the difference in length d, so a candidate's similarity is at most
// 1 − d / max(qlen, len). On each side of qlen that bound falls as d grows,
// so each side is walked outward from qlen and abandoned once its bound
// cannot beat the best found. The result equals trying every candidate.
func bestSimilarity(q *typo.Pattern, cands []candidate) float64 {
	best := 0.0
	qlen := q.Len()
	split, _ := slices.BinarySearchFunc(cands, qlen, func(c candidate, n int) int { return c.length - n })
	try := func(c candidate) bool {
		longest := max(qlen, c.length)
		if longest == 0 {
			best = 1
			return true
		}
		if 1-float64(abs(qlen-c.length))/float64(longest) <= best {
			return false
		}
		best = max(best, 1-float64(q.Distance(c.runes))/float64(longest))
		return true
	}
	for i := split; i < len(cands) && try(cands[i]); i++ {
	}
	for i := split - 1; i >= 0 && try(cands[i]); i-- {
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
