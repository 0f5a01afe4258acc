// Package matcher maps an agent's free-text query to registry categories.
//
// Index is the matcher the server uses; Baseline is the first, whole-string
// algorithm, kept to measure Index against in tests and benchmarks.
package matcher

import (
	"errors"
	"strings"
)

// Matcher scores the categories of one registry against a query. It is
// built once per registry and shared by all requests, so implementations
// must be safe for concurrent use and must not change after construction.
type Matcher interface {
	// Match returns up to limit categories, best first (ties broken by
	// slug), leaving out categories that share nothing with the query, or
	// ErrEmptyQuery / ErrOnlyStopWords.
	Match(query string, limit int) ([]Scored, error)
}

// Scored is a category's score for one query, from 0 (unrelated) to 1.
type Scored struct {
	Slug  string
	Score float64
	// Grounded says the matcher has evidence for the category: a word of
	// the query meets what the curator wrote about it, not merely a prior,
	// a word in its sources' prose or closeness in meaning. Only a
	// grounded category is offered as a candidate; the score alone cannot
	// say it, as calibration keeps every listed score above zero.
	Grounded bool
	// Near says the question as a whole is close in meaning to what the
	// curator wrote about the category (the cosine of their meanings is
	// at least nearMargin above the registry's mean for the question,
	// meaning.go), whether or not it is grounded. Only
	// a long list (a limit above the few the answer and its confidence
	// read) says it, and only for a question some word of which has a
	// word vector. A category near but not grounded may be offered as a
	// candidate closest in meaning only, said to be so.
	Near bool
	// Lead is what a no-match answer orders its described candidates by,
	// the categories that share words with the question and those near it
	// in meaning alike: the score (before leadByMeaning gave the grounded
	// their new order's), plus closeness in meaning of the whole question
	// and the semantic score (meaning.go, leadKey). Only a long list whose
	// question has word vectors says it, and only for a category grounded
	// or near; zero otherwise.
	Lead float64
}

var (
	// ErrEmptyQuery means the query is empty or only whitespace.
	ErrEmptyQuery = errors.New("query is empty")
	// ErrOnlyStopWords means nothing is left of the query once common
	// words and punctuation are removed.
	ErrOnlyStopWords = errors.New("query has only stop words")
)

var _ Matcher = (*Index)(nil)
var _ Matcher = (*Baseline)(nil)

func byScore(a, b Scored) int { return cmpScored(&a, &b) }

// cmpScored is byScore through pointers, for callers that sort large
// values holding a Scored without copying them (sortHits).
func cmpScored(a, b *Scored) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	return strings.Compare(a.Slug, b.Slug)
}

// byHitScore is byScore for ranked hits.
func byHitScore(a, b hit) int { return byScore(a.Scored, b.Scored) }
