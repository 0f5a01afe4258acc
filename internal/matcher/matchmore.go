package matcher

// MoreMatcher is a Matcher that can rank one query twice, at a short
// limit and then, when the short list asks for it, at a longer one, from
// a single analysis of the query. A not-confident get_sources answer does
// exactly that (its confidence read from the short list, its listing from
// the long one), and analysing the query, typo and related-word lookups
// included, was a quarter of its cost (mcp BenchmarkHandle/mix-v1-unsure).
type MoreMatcher interface {
	Matcher
	// MatchMore is Match(query, limit) as head, then, when head has no
	// category scoring at least threshold and more > 0, Match(query,
	// more) as long; it returns exactly what those calls return.
	MatchMore(query string, limit int, threshold float64, more int) (head, long []Scored, err error)
}

var _ MoreMatcher = (*Index)(nil)

// MatchMore implements MoreMatcher. Ranking reads the analysed query and
// never changes it, and leaves the working memory as clean as it found it
// (as Match's pooled scratch is for the next query), so the second ranking
// is the one a second Match would make.
func (x *Index) MatchMore(query string, limit int, threshold float64, more int) (head, long []Scored, err error) {
	s := x.scratch.Get().(*scratch)
	// Released before it goes back, even when a ranking panics (a
	// transport recovers the request): a scratch returned with a kept
	// accumulation would serve the next query another's candidates.
	defer func() {
		s.release()
		x.scratch.Put(s)
	}()
	p := &s.query
	if err := x.parseInto(query, p); err != nil {
		return nil, nil, err
	}
	// The short ranking's accumulation, selection and finished categories
	// are kept for the long one (candidatesIn, finishedBefore); release
	// clears them before s goes back to the pool.
	s.keep = more > 0
	head = scored(x.rank(p, limit, s))
	s.keep = false
	if more > 0 && (len(head) == 0 || head[0].Score < threshold) {
		long = scored(x.rank(p, more, s))
	}
	return head, long, nil
}

// scored copies ranked hits out of the working memory that holds them.
func scored(hits []hit) []Scored {
	out := make([]Scored, len(hits))
	for i, h := range hits {
		out[i] = h.Scored
		out[i].Grounded = h.ev.grounded
	}
	return out
}
