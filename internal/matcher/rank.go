package matcher

import (
	"math"
	"slices"
)

// How a score is made. For a query with words q1..qn (stop words removed)
// and a category c:
//
//  1. Each word has a weight w: the normalized IDF of the term it meets
//     (1 for a term in one category, near 0.3 for one in every category),
//     times genericFactor for generic request words ("guide", "best",
//     "learn") and numbers. A word the registry has never seen, even
//     allowing for typos, weighs unknownWeight: it is probably the topic,
//     and a category that does not contain it should not win on the rest.
//     The k-th unknown word weighs unknownWeight/k: in a long, rambling
//     query most unknown words are filler ("I keep fighting the borrow
//     checker ..."), while in a short one the unknown word is the topic.
//  2. Each word finds, in c, the strength of the fields it appears in
//     (fieldStrength, plus multiFieldBonus per extra field), times the
//     quality of the match: 1 for the same stem, less for a typo, a prefix
//     ("keepass" → "keepassxc") or a split compound ("mailserver").
//  3. Coverage Q = Σ w·strength / Σ w: the share of the query that c
//     explains. It is 1 when every word sits in c's name, slug or patterns.
//  4. Phrase P: the best single short field of c (slug, name, a pattern, a
//     source name or host) scored both ways: the share of the field's
//     weight the query covers times the share of the query the field
//     covers. P is 1 when the query is exactly one of c's patterns.
//  5. base = Q·(1 − phraseWeight + phraseWeight·P), so a query that
//     scatters its words across fields scores below one that states a
//     curated phrase.
//  6. Adjacency A: the weight of the adjacent query word pairs that also
//     stand next to each other in one of c's short fields, over Σ w.
//     score = base + adjacencyWeight·(1 − base)·A.
//
// The score is therefore in [0, 1]: near 1 only when the query is, up to
// stop words and word forms, one of the category's own phrases; 0.4 (the
// default threshold) when about half of what the query asks for is found in
// the category's strongest fields. Unknown words pull it down, which is
// what keeps off-topic queries ("learn python", when the registry has no
// Python) below the threshold.
//
// The constants are in tuning (index.go).
// scratch is per-query working memory, sized to the index and pooled.
type scratch struct {
	acc      []float32 // Σ w·strength per category
	matched  []float32 // Σ w of the query words found in the category
	share    []float32 // Σ of the words' best short-field shares (postShare)
	shareNow []float32 // the current word's best share per category
	best     []float32 // the current word's best strength per category
	stamp    []uint32  // word pass that last wrote best[c]
	pass     uint32
	touched  []uint32 // categories with acc > 0
	wordSeen []uint32 // categories the current word reached
	// The semantic channel (vectors.go): the score so far, the current
	// word's best per category, and the categories each has reached.
	sem, semNow         []float32
	semTouched, semWord []uint32
	dots                []int32 // a query word's dot product with each row of Index.simRows
	// candMask and posOf are candMasks' rows and its category → row + 1.
	candMask []uint16
	posOf    []uint8
	hits     []hit     // the candidates of the current query
	semOnly  []semOnly // blend's categories only word vectors reach
	listed   []hit     // byMeaning's long list
	// byMeaning's dot products and categories listed (meaningWork).
	meanDots []int32
	meanIn   []uint64
	// keep is set while the first ranking of a query that will be ranked
	// again (MatchMore) runs: what it accumulated and selected stays in
	// kept, and the categories it finished in fins, for the second
	// ranking to read back; release clears them.
	keep bool
	kept keptWork
	fins []finEntry
	// bounds holds top's categories worth scoring, by upper bound.
	bounds [maxFinish]qcand
	// sortHits' positions and copies.
	order   []int32
	sortBuf []hit
	query   parsed // the current query, for Match
}

func newScratch(n int) *scratch {
	s := &scratch{acc: make([]float32, n), matched: make([]float32, n), share: make([]float32, n), shareNow: make([]float32, n), best: make([]float32, n), stamp: make([]uint32, n), posOf: make([]uint8, n)}
	if n <= semAllCats {
		s.sem, s.semNow = make([]float32, n), make([]float32, n)
	}
	return s
}

// Match implements Matcher.
func (x *Index) Match(query string, limit int) ([]Scored, error) {
	s := x.scratch.Get().(*scratch)
	p := &s.query
	if err := x.parseInto(query, p); err != nil {
		x.scratch.Put(s)
		return nil, err
	}
	hits := x.rank(p, limit, s)
	out := make([]Scored, len(hits))
	for i, h := range hits {
		out[i] = h.Scored
		out[i].Grounded = h.ev.grounded
	}
	x.scratch.Put(s)
	return out, nil
}

// hit is a ranked category with its number in the index.
type hit struct {
	Scored
	cat     uint32
	crowded bool // more categories than were scored could rival it
	// lex is the lexical score before any doubt factor, sem the semantic
	// score above the registry's mean (0 when the channel is off): the
	// evidence confidence (calibrate.go) weighs.
	lex         float64
	sem, semGap float32
	ev          evidence // ev.doubted(): its score was scaled down (see doubt)
	cov, phrase float32
}

// rank returns the limit best categories for a parsed query, with the
// best one's score its calibrated confidence (calibrate.go). They live in
// s, which the caller must not return to the pool while it reads them.
func (x *Index) rank(p *parsed, limit int, s *scratch) []hit {
	out, vectors := x.candidatesIn(p, limit, s)
	x.calibrate(p, out, vectors)
	out = x.byMeaning(p, out[:min(len(out), limit)], limit, s)
	sortHits(out, s) // ties by slug (see byScore)
	return out
}

// candidates ranks the categories by their evidence: at least limit, and
// the runner-up, which is needed to judge the best whatever the limit.
// vectors says whether the semantic channel ran.
func (x *Index) candidates(p *parsed, limit int) (out []hit, vectors bool) {
	s := x.scratch.Get().(*scratch)
	defer x.scratch.Put(s)
	out, vectors = x.candidatesIn(p, limit, s)
	return slices.Clone(out), vectors
}

// candidatesIn is candidates with the working memory s, which also holds
// the hits returned (until s is reused).
//
// A second ranking of the query s holds the accumulation of (MatchMore's
// long one, s.kept) starts from that accumulation when it is the one its
// own would be (kept.serves), and selects its longer top from it.
func (x *Index) candidatesIn(p *parsed, limit int, s *scratch) (out []hit, vectors bool) {
	if limit <= 0 || p.total == 0 {
		return nil, false
	}
	// The pool is the same whatever the limit, so the runner-up, and with
	// it the confidence, do not depend on how many candidates were asked
	// for.
	n := max(limit, candidatePool)
	var sel selection
	if k := &s.kept; k.serves(n) {
		vectors, sel = k.vectors, k.sel
		k.restoreSem(s)
		if len(s.semTouched) > 0 {
			n += semExtra
		}
	} else {
		s.clearAccumulated()
		vectors = x.semantic(p, s)
		if len(s.semTouched) > 0 {
			n += semExtra
		}
		pruned, wide := x.accumulate(p, s, n)
		sel = x.selection(p, s)
		if s.keep {
			k.keep(s, n, pruned, wide, vectors, sel)
		}
	}
	// Room for top's n, and for what blend adds after them: as many
	// categories only word vectors reach as were asked for. Without it
	// the long list of a not-confident answer at 1,000 categories grew
	// its 200 hits out of s.hits, 60 KB of garbage a question.
	room := n + semExtra
	if len(s.semTouched) > 0 {
		room = n + max(semExtra, limit)
	}
	if cap(s.hits) < room {
		s.hits = make([]hit, 0, room)
	}
	out = x.top(p, s, n, sel)
	if !s.kept.ok {
		s.clearAccumulated()
	}
	if len(s.semTouched) > 0 {
		out = x.blend(out, s, limit)
	}
	return out, vectors
}

// keptWork is what a ranking that keeps (scratch.keep) accumulated for the
// query, for a second ranking of it. The accumulation itself (acc,
// matched, share, touched) stays in the scratch while ok is set.
type keptWork struct {
	ok      bool
	n       int  // the candidates accumulate was asked for, semExtra included
	pruned  bool // accumulate stopped admitting categories (see accumulate)
	wide    bool // and any count above maxAssured would have stopped there too
	vectors bool // the semantic channel ran
	// The semantic channel's categories and scores before blend, which
	// consumes them.
	semCats []uint32
	semVals []float32
	sel     selection
}

// serves says whether the kept accumulation is the one a ranking of
// max(limit, candidatePool) = base candidates would make. The limit enters
// accumulate only through its pruning: a category reaches it the same way
// whatever the limit, and once pruning starts, categories already touched
// still get every word's contribution, untouched ones none. So an equal
// candidate count (semExtra is added to both, as the semantic channel's
// categories are the query's) gives the same accumulation; and when the
// kept one never pruned, a larger count never prunes either: it prunes
// only with at least that many categories touched and the bound of the
// words left below the count-th best floor, which is at most the kept
// count's floor, never passed. Then selection, which reads only the
// accumulation, is the same too. A smaller count could prune where the
// kept one did not. Two counts above maxAssured prune at the same rank
// (pruneRank), so they accumulate the same; and a count of at most
// maxAssured that pruned where that rank would prune too (wide)
// accumulated as they do, since that rank's floor is at most its own and
// no sooner passed.
func (k *keptWork) serves(base int) bool {
	if !k.ok {
		return false
	}
	n := base
	if len(k.semCats) > 0 {
		n += semExtra
	}
	return n == k.n || n > maxAssured && (k.n > maxAssured || k.wide) || n > k.n && !k.pruned
}

func (k *keptWork) keep(s *scratch, n int, pruned, wide, vectors bool, sel selection) {
	k.ok, k.n, k.pruned, k.wide, k.vectors, k.sel = true, n, pruned, wide, vectors, sel
	k.semCats = append(k.semCats[:0], s.semTouched...)
	k.semVals = k.semVals[:0]
	for _, c := range s.semTouched {
		k.semVals = append(k.semVals, s.sem[c])
	}
}

// restoreSem puts back the semantic scores semantic gave the query.
func (k *keptWork) restoreSem(s *scratch) {
	s.semTouched = append(s.semTouched[:0], k.semCats...)
	for i, c := range k.semCats {
		s.sem[c] = k.semVals[i]
	}
}

// clearAccumulated zeroes the accumulation of the last query and forgets
// what was kept of it.
func (s *scratch) clearAccumulated() {
	for _, c := range s.touched {
		s.acc[c], s.matched[c], s.share[c] = 0, 0, 0
	}
	s.touched = s.touched[:0]
	s.kept.ok = false
}

// release readies s for the next query after a ranking that kept its work.
func (s *scratch) release() {
	s.keep = false
	s.clearAccumulated()
	s.fins = s.fins[:0]
}

// candidatePool is the fewest candidates ranked for any query: what the
// confidence model was fitted on (calibration_test.go).
const candidatePool = 5

// semExtra: with the semantic channel on, this many more lexical
// candidates are scored, as the blend can reorder them.
const semExtra = 8

// accumulate walks the postings of every term the query meets and sums
// each category's coverage numerator. Only categories that share a term
// with the query are touched.
//
// Words go rarest (heaviest) first, and as soon as the words left could
// not lift a category that none of the earlier words reached above the
// pruneRank(limit)-th best score already assured, the remaining words
// only update categories already touched (the MaxScore idea from search
// engines). A query that names its topic next to "guide" or "server" thus
// never walks the long postings of those common words in full. It reports
// whether it did so: then categories no earlier word reached were left
// untouched. A negative limit never prunes.
//
// wide says that the ranks of candidate counts above maxAssured would
// have pruned at the same word (always so when limit is such a count).
// With a smaller limit it is found only for a ranking that keeps its work
// (scratch.keep): MatchMore's long ranking then reuses the short one's
// accumulation where it pruned at once, on the first common word, as a
// question of common words at 100,000 categories does ("meaning of the
// word serendipity": 160,000 postings walked, twice).
func (x *Index) accumulate(p *parsed, s *scratch, limit int) (pruned, wide bool) {
	var order [maxQueryWords]uint8
	n := 0
	for i, w := range p.words {
		if len(w.cands) > 0 {
			order[n] = uint8(i)
			n++
		}
	}
	slices.SortStableFunc(order[:n], heavierFirst[uint8](p))
	// restAcc[k], restW[k]: the most words order[k:] can add to a
	// category's numerator, and their weight.
	var restAcc, restW [maxQueryWords + 1]float32
	for k := n - 1; k >= 0; k-- {
		w := &p.words[order[k]]
		restAcc[k] = restAcc[k+1] + w.weight*w.best*float32(x.tune.strengthCap)
		restW[k] = restW[k+1] + w.weight
	}
	inv, qmax := 1/p.total, p.maxCoverage
	rank := pruneRank(limit)
	updateOnly := false
	for k := range n {
		w := &p.words[order[k]]
		if !updateOnly && rank > 0 && k > 0 && len(s.touched) >= rank {
			fresh := x.upperBound(p, min(restAcc[k]*inv, qmax), restW[k]*inv, restW[k]*inv)
			updateOnly = fresh+roundingSlack < x.assured(s, rank, inv, qmax)
			if wideRank := pruneRank(maxAssured + 1); updateOnly {
				wide = rank == wideRank || s.keep && fresh+roundingSlack < x.assured(s, wideRank, inv, qmax)
			}
		}
		if len(w.cands) == 1 && !updateOnly {
			x.addWord(w, s)
		} else {
			x.passWord(w, s, updateOnly)
		}
	}
	return updateOnly, wide
}

// passWord is accumulate's pass of word w: each category it reaches
// gains its best strength and share among the terms w meets; with
// updateOnly, only the categories already touched.
func (x *Index) passWord(w *qword, s *scratch, updateOnly bool) {
	s.pass++
	if s.pass == 0 { // wrapped: old stamps could collide
		clear(s.stamp)
		s.pass = 1
	}
	for _, c := range w.cands {
		cats, masks := x.postings(c.term)
		shares := x.postingShares(c.term)
		onlyCurated := w.kind == KindRelated
		note := func(j int, cat uint32) {
			mask := masks[j]
			if onlyCurated {
				// A related word proves something only in what the
				// curator wrote about the category: its sources'
				// names and prose are too loose a net for a loose
				// link ("child" → "individuals" in a source's name).
				if mask &= curatedFields; mask == 0 {
					return
				}
			}
			v := c.quality * x.strength[mask]
			sh := c.quality * float32(shares[j]) / 255
			if s.stamp[cat] != s.pass {
				s.stamp[cat] = s.pass
				s.best[cat], s.shareNow[cat] = v, sh
				s.wordSeen = append(s.wordSeen, cat)
			} else {
				s.best[cat] = max(s.best[cat], v)
				s.shareNow[cat] = max(s.shareNow[cat], sh)
			}
		}
		switch {
		case !updateOnly:
			for j, cat := range cats {
				note(j, cat)
			}
		case len(s.touched)*16 < len(cats):
			// Few categories left in play: look each up.
			for _, cat := range s.touched {
				if j, ok := slices.BinarySearch(cats, cat); ok {
					note(j, cat)
				}
			}
		default:
			for j, cat := range cats {
				if s.acc[cat] > 0 {
					note(j, cat)
				}
			}
		}
	}
	for _, cat := range s.wordSeen {
		if s.acc[cat] == 0 {
			s.touched = append(s.touched, cat)
		}
		s.acc[cat] += w.weight * s.best[cat]
		s.matched[cat] += w.weight
		s.share[cat] += s.shareNow[cat]
	}
	s.wordSeen = s.wordSeen[:0]
}

// addWord is accumulate's pass of a word that meets one term, before any
// pruning: a category then meets the word once, so its best strength and
// share for the word are those of its one posting, added at once, with
// no stamps, no per-word maxima and no list of the categories the word
// reached. It adds what the general pass adds, in the same order
// (TestAddWordIsGeneralPass). The common words of an unsure question
// mostly meet one term each, and at 100,000 categories their postings
// run to tens of thousands.
func (x *Index) addWord(w *qword, s *scratch) {
	c := w.cands[0]
	cats, masks := x.postings(c.term)
	shares := x.postingShares(c.term)
	masks, shares = masks[:len(cats)], shares[:len(cats)]
	onlyCurated := w.kind == KindRelated
	for j, cat := range cats {
		mask := masks[j]
		if onlyCurated {
			if mask &= curatedFields; mask == 0 {
				continue
			}
		}
		if s.acc[cat] == 0 {
			s.touched = append(s.touched, cat)
		}
		s.acc[cat] += w.weight * (c.quality * x.strength[mask])
		s.matched[cat] += w.weight
		s.share[cat] += c.quality * float32(shares[j]) / 255
	}
}

// maxAssured is the largest candidate count whose own floor accumulate
// prunes at (pruneRank).
const maxAssured = 8

// pruneRank is the rank of the assured floor accumulate compares the
// words left with, for a ranking of limit candidates; 0 for a negative
// limit, which never prunes.
//
// Up to maxAssured it is limit itself: no category left untouched could
// reach the answer. Above it, the long list of a not-confident answer
// (200, or the whole registry) would need the floor of its last: no
// floor of a few hundred categories was kept, so that ranking never
// pruned, and at 100,000 categories it walked in full the postings of
// every common word of the question ("tutorial", "beginners": 60,000
// categories and more each), the slowest of the unsure questions. But
// such a ranking reads no more of the accumulation than selection takes
// from it: the maxFinish categories of best upper bound, in their order,
// and the best bound of the others. A category whose bound (at most what
// the words left could lift it to) lies below the (maxFinish+1)-th best
// floor of those touched is none of them, and leaving it untouched
// changes neither: touched stays a prefix of what it would have been,
// offered in the same order (TestPrunedSelectionIsWhole). So above
// maxAssured the rank is maxFinish+1, whatever the limit, and every such
// limit accumulates the same.
func pruneRank(limit int) int {
	switch {
	case limit < 0:
		return 0
	case limit <= maxAssured:
		return limit
	}
	return maxFinish + 1
}

// assured is the rank-th best score that the touched categories are
// already sure to reach (0 when fewer are touched): coverage only grows
// as words are added, and the phrase and adjacency parts only add, so
// q·(1 − phraseWeight) is a floor. rank is at most maxFinish+1.
func (x *Index) assured(s *scratch, rank int, inv, qmax float32) float32 {
	// The rank best floors in a heap, the least of them on top.
	var heap [maxFinish + 1]float32
	if rank <= 0 || rank > len(heap) || len(s.touched) < rank {
		return 0
	}
	h := heap[:0]
	for _, c := range s.touched {
		v := min(s.acc[c]*inv, qmax)
		if len(h) < rank {
			h = append(h, v)
			for i := len(h) - 1; i > 0; { // sift up
				parent := (i - 1) / 2
				if h[parent] <= h[i] {
					break
				}
				h[i], h[parent] = h[parent], h[i]
				i = parent
			}
			continue
		}
		if v <= h[0] {
			continue
		}
		h[0] = v
		for i := 0; ; { // sift down
			m, l := i, 2*i+1
			if l < len(h) && h[l] < h[m] {
				m = l
			}
			if r := l + 1; r < len(h) && h[r] < h[m] {
				m = r
			}
			if m == i {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	return h[0] * (1 - float32(x.tune.phraseWeight))
}

// maxFinish bounds how many categories get their phrases scored. They are
// taken in order of their upper bound, and scoring stops once no bound
// can beat the limit-th score, so the answer is exact unless more than
// maxFinish categories tie near the top: a query made only of words that
// most categories share ("guide"), where any of them is as good an answer.
const maxFinish = 64

// selection is which categories top may score: the best maxFinish of the
// accumulated ones by upper bound, in that order, the best bound of the
// others (-1 when none was dropped), and the candidate terms' field masks
// of those selected (candMasks; nil when not worth gathering). It does not
// depend on the limit.
type selection struct {
	byUB       []qcand
	maxDropped float32
	rows       []uint16
}

// selection selects from the accumulation in s. Its slices live in s.
func (x *Index) selection(p *parsed, s *scratch) selection {
	inv, qmax := 1/p.total, p.maxCoverage
	bounds := best[qcand]{items: s.bounds[:0], k: maxFinish, worse: func(a, b qcand) bool { return a.q < b.q }}
	var maxDropped float32 = -1 // the best bound of a category never scored
	for _, c := range s.touched {
		ub := x.upperBound(p, min(s.acc[c]*inv, qmax), s.matched[c]*inv, s.share[c])
		if bounds.full() && ub <= bounds.items[0].q {
			// What offer would refuse, without the call through worse.
			maxDropped = max(maxDropped, ub)
			continue
		}
		if dropped, ok := bounds.offer(qcand{c, ub}); ok {
			maxDropped = max(maxDropped, dropped.q)
		}
	}
	byUB := bounds.items
	slices.SortFunc(byUB, func(a, b qcand) int {
		switch {
		case a.q > b.q:
			return -1
		case a.q < b.q:
			return 1
		}
		return int(a.cat) - int(b.cat)
	})
	return selection{byUB: byUB, maxDropped: maxDropped, rows: x.candMasks(p, s, byUB)}
}

// top returns the limit best categories of sel. Scoring phrases needs a
// look at a category's fields, so it is done only where it can change the
// answer: in order of the categories' upper bounds, until the next bound
// cannot beat the worst score kept.
func (x *Index) top(p *parsed, s *scratch, limit int, sel selection) []hit {
	inv := 1 / p.total
	byUB, rows := sel.byUB, sel.rows
	kept := hitHeap{items: s.hits[:0], k: limit}
	for i, qc := range byUB {
		if kept.full() && float64(qc.q)+roundingSlack < kept.items[0].Score {
			break
		}
		var masks []uint16
		if rows != nil {
			k := len(p.candBuf)
			masks = rows[i*k : (i+1)*k]
		}
		q := s.acc[qc.cat] * inv
		f, ok := s.finishedBefore(i, qc.cat, q)
		if !ok {
			f = x.finish(p, qc.cat, q, nil, masks)
			s.keepFinished(qc.cat, q, f)
		}
		kept.offer(hit{Scored: Scored{Slug: x.slugs[qc.cat], Score: roundScore(f.score)}, cat: qc.cat, lex: f.lex, ev: f.ev, cov: f.cov, phrase: f.phrase})
	}
	out := kept.items
	sortHits(out, s)
	// More than maxFinish categories could reach the kept scores: the
	// runner-up may be one never scored, so no category is shown to stand
	// clear of the rest (distinct then raises nothing).
	if len(out) > 0 && float64(sel.maxDropped)+roundingSlack >= out[len(out)-1].Score {
		for i := range out {
			out[i].crowded = true
		}
	}
	return out
}

// finEntry is a category finished at coverage q.
type finEntry struct {
	cat uint32
	q   float32
	f   finished
}

// finishedBefore is what finish gave category c at coverage q earlier in
// this query (fins), if it did. finish reads only the query, the index
// and c's coverage, so it would give the same again: MatchMore's long
// ranking scored again every category its short one had. i is c's place
// in top's order: a second ranking from the kept selection finishes the
// same categories in the same order, so the i-th kept is c's.
func (s *scratch) finishedBefore(i int, c uint32, q float32) (finished, bool) {
	if i < len(s.fins) && s.fins[i].cat == c && s.fins[i].q == q {
		return s.fins[i].f, true
	}
	for i := range s.fins {
		if e := &s.fins[i]; e.cat == c && e.q == q {
			return e.f, true
		}
	}
	return finished{}, false
}

// keepFinished notes f, c's finish at coverage q, when s keeps them.
func (s *scratch) keepFinished(c uint32, q float32, f finished) {
	if s.keep {
		s.fins = append(s.fins, finEntry{c, q, f})
	}
}

// roundScore keeps six decimals: scores are computed in float32, which
// holds no more, and "0.6170543432235718" has no place in an answer.
// Scores equal to six decimals are ties, broken by slug.
func roundScore(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// roundingSlack covers rounding when a bound is compared with a rounded
// score.
const roundingSlack = 1e-6
