package matcher

import (
	"iter"
	"math"
	"math/bits"
	"slices"
	"strings"
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
	hits     []hit  // the candidates of the current query
	query    parsed // the current query, for Match
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
	return out[:min(len(out), limit)]
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
func (x *Index) candidatesIn(p *parsed, limit int, s *scratch) (out []hit, vectors bool) {
	if limit <= 0 || p.total == 0 {
		return nil, false
	}
	// The pool is the same whatever the limit, so the runner-up, and with
	// it the confidence, do not depend on how many candidates were asked
	// for.
	n := max(limit, candidatePool)
	vectors = x.semantic(p, s)
	if len(s.semTouched) > 0 {
		n += semExtra
	}
	x.accumulate(p, s, n)
	if cap(s.hits) < n+semExtra {
		s.hits = make([]hit, 0, n+semExtra)
	}
	out = x.top(p, s, n)
	for _, c := range s.touched {
		s.acc[c], s.matched[c], s.share[c] = 0, 0, 0
	}
	s.touched = s.touched[:0]
	if len(s.semTouched) > 0 {
		out = x.blend(out, s, limit)
	}
	return out, vectors
}

// candidatePool is the fewest candidates ranked for any query: what the
// confidence model was fitted on (calibration_test.go).
const candidatePool = 5

// semExtra: with the semantic channel on, this many more lexical
// candidates are scored, as the blend can reorder them.
const semExtra = 8

// blend adds the semantic score to the lexical one of the categories that
// are not confident answers (see vectors.go) and re-sorts. It orders the
// candidates an agent is offered; it never makes an answer: a confident
// category keeps its lexical score, a doubted one keeps its doubt factor,
// and one only the semantic channel reaches counts as doubted.
func (x *Index) blend(out []hit, s *scratch, limit int) []hit {
	// Only what sets a category apart from the registry's background
	// counts: in a registry all about software, every category is
	// somewhat close to "compiler".
	var mean float32
	for _, c := range s.semTouched {
		mean += s.sem[c]
	}
	mean /= float32(len(x.slugs))
	for _, c := range s.semTouched {
		s.sem[c] = max(0, s.sem[c]-mean)
	}
	var semBest, semSecond float32
	var semArg uint32
	for _, c := range s.semTouched {
		switch v := s.sem[c]; {
		case v > semBest:
			semBest, semSecond, semArg = v, semBest, c
		case v > semSecond:
			semSecond = v
		}
	}
	// gap is how far c's semantic score stands above every other's.
	gap := func(c uint32) float32 {
		if c == semArg {
			return s.sem[c] - semSecond
		}
		return s.sem[c] - semBest
	}
	lexical := len(out)
	for i := range out {
		h := &out[i]
		h.sem, h.semGap = s.sem[h.cat], gap(h.cat)
		if !h.ev.doubted() {
			continue
		}
		lex := h.Score / x.tune.doubtFactor
		v := lex + semWeight*float64(s.sem[h.cat])*(1-lex)
		h.Score = roundScore(v * x.tune.doubtFactor)
	}
	// Categories only word vectors reach: the semExtra closest, or as many
	// as were asked for when that is more (a no-match answer that lists
	// many categories wants those closest in meaning among them). Offering
	// every one cost a registry of a thousand categories a thousand hits
	// and a sort per query.
	var store [semExtra]hit
	k := max(semExtra, limit)
	items := store[:0]
	if k > semExtra {
		items = make([]hit, 0, k) // only a no-match answer's long list asks for more
	}
	vectorsOnly := hitHeap{items: items, k: k}
	for _, c := range s.semTouched {
		if s.sem[c] > 0 && !slices.ContainsFunc(out[:lexical], func(h hit) bool { return h.cat == c }) {
			vectorsOnly.offer(hit{Scored: Scored{Slug: x.slugs[c], Score: roundScore(semWeight * float64(s.sem[c]) * x.tune.doubtFactor)}, cat: c, sem: s.sem[c], semGap: gap(c), ev: evidence{kind: doubtVectorsOnly}})
		}
		s.sem[c] = 0
	}
	out = append(out, vectorsOnly.items...)
	s.semTouched = s.semTouched[:0]
	slices.SortFunc(out, func(a, b hit) int { return byScore(a.Scored, b.Scored) })
	x.orderTail(out)
	return out
}

// orderTail reorders the candidates after the first candidatePool, which
// neither the answer nor its confidence reads, by closeness in meaning as
// well as by words: a weak lexical hit that shares only an ordinary word
// with the query gains the word-vector score a category in doubt does, so
// a category close in meaning but sharing no word is not pushed out of a
// long list by it. Scores stay at or below the last head candidate's, so
// the list is still in score order.
func (x *Index) orderTail(out []hit) {
	if len(out) <= candidatePool {
		return
	}
	ceil := out[candidatePool-1].Score
	tail := out[candidatePool:]
	for i := range tail {
		h := &tail[i]
		if h.ev.doubted() {
			continue // blended already
		}
		v := h.Score + semWeight*float64(h.sem)*(1-h.Score)
		h.Score = roundScore(min(v, ceil))
	}
	slices.SortStableFunc(tail, func(a, b hit) int { return byScore(a.Scored, b.Scored) })
}

// accumulate walks the postings of every term the query meets and sums
// each category's coverage numerator. Only categories that share a term
// with the query are touched.
//
// Words go rarest (heaviest) first, and as soon as the words left could
// not lift a category that none of the earlier words reached above the
// limit-th best score already assured, the remaining words only update
// categories already touched (the MaxScore idea from search engines). A
// query that names its topic next to "guide" or "server" thus never walks
// the long postings of those common words in full.
func (x *Index) accumulate(p *parsed, s *scratch, limit int) {
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
	updateOnly := false
	for k := range n {
		w := &p.words[order[k]]
		if !updateOnly && k > 0 && len(s.touched) >= limit {
			fresh := x.upperBound(p, min(restAcc[k]*inv, qmax), restW[k]*inv, restW[k]*inv)
			updateOnly = fresh+roundingSlack < x.assured(s, limit, inv, qmax)
		}
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
}

// assured is the limit-th best score that the touched categories are
// already sure to reach: coverage only grows as words are added, and the
// phrase and adjacency parts only add, so q·(1 − phraseWeight) is a floor.
func (x *Index) assured(s *scratch, limit int, inv, qmax float32) float32 {
	var worst [8]float32 // the limit best floors, ascending; limit ≤ 8 here
	if limit > len(worst) {
		return 0
	}
	k := 0
	for _, c := range s.touched {
		v := min(s.acc[c]*inv, qmax)
		if k < limit {
			worst[k] = v
			k++
			slices.Sort(worst[:k])
		} else if v > worst[0] {
			worst[0] = v
			slices.Sort(worst[:k])
		}
	}
	return worst[0] * (1 - float32(x.tune.phraseWeight))
}

// maxFinish bounds how many categories get their phrases scored. They are
// taken in order of their upper bound, and scoring stops once no bound
// can beat the limit-th score, so the answer is exact unless more than
// maxFinish categories tie near the top: a query made only of words that
// most categories share ("guide"), where any of them is as good an answer.
const maxFinish = 64

// top returns the limit best categories. Scoring phrases needs a look at a
// category's fields, so it is done only where it can change the answer: in
// order of the categories' upper bounds, until the next bound cannot beat
// the worst score kept.
func (x *Index) top(p *parsed, s *scratch, limit int) []hit {
	inv, qmax := 1/p.total, p.maxCoverage
	var store [maxFinish]qcand
	bounds := best[qcand]{items: store[:0], k: maxFinish, worse: func(a, b qcand) bool { return a.q < b.q }}
	var maxDropped float32 = -1 // the best bound of a category never scored
	for _, c := range s.touched {
		ub := x.upperBound(p, min(s.acc[c]*inv, qmax), s.matched[c]*inv, s.share[c])
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
	kept := hitHeap{items: s.hits[:0], k: limit}
	rows := x.candMasks(p, s, byUB)
	for i, qc := range byUB {
		if kept.full() && float64(qc.q)+roundingSlack < kept.items[0].Score {
			break
		}
		var masks []uint16
		if rows != nil {
			k := len(p.candBuf)
			masks = rows[i*k : (i+1)*k]
		}
		f := x.finish(p, qc.cat, s.acc[qc.cat]*inv, nil, masks)
		kept.offer(hit{Scored: Scored{Slug: x.slugs[qc.cat], Score: roundScore(f.score)}, cat: qc.cat, lex: f.lex, ev: f.ev, cov: f.cov, phrase: f.phrase})
	}
	out := kept.items
	slices.SortFunc(out, func(a, b hit) int { return byScore(a.Scored, b.Scored) })
	// More than maxFinish categories could reach the kept scores: the
	// runner-up may be one never scored, so no category is shown to stand
	// clear of the rest (distinct then raises nothing).
	if len(out) > 0 && float64(maxDropped)+roundingSlack >= out[len(out)-1].Score {
		for i := range out {
			out[i].crowded = true
		}
	}
	return out
}

// roundScore keeps six decimals: scores are computed in float32, which
// holds no more, and "0.6170543432235718" has no place in an answer.
// Scores equal to six decimals are ties, broken by slug.
func roundScore(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// roundingSlack covers rounding when a bound is compared with a rounded
// score.
const roundingSlack = 1e-6

// upperBound is the highest score a category can reach with coverage q
// when the query words it contains weigh m (a share of the query). Both
// the phrase score and the adjacency share are at most m: a phrase can only
// cover words the category has, and each such word is in at most two
// adjacent pairs, each counting half its weight.
//
// sh, the sum of the words' best shares of one short field, bounds the
// phrase score too: a field's covered share is at most the sum of the
// shares of the words it holds.
func (x *Index) upperBound(p *parsed, q, m, sh float32) float32 {
	m = min(m, 1)
	adj := m
	if len(p.pairs) == 0 {
		adj = 0
	}
	return x.combine(min(q, 1), min(m, sh), adj)
}

// combine is the score of a category with coverage q, phrase score phrase
// and adjacency share adj (steps 5 and 6 above); it grows with each.
func (x *Index) combine(q, phrase, adj float32) float32 {
	pw, aw := float32(x.tune.phraseWeight), float32(x.tune.adjacencyWeight)
	base := q * (1 - pw + pw*phrase)
	return min(1, base+aw*(1-base)*adj)
}

// finished is a category's lexical scoring: its score (scaled by the doubt
// factor when doubted), the score before that, and the parts the
// confidence model reads (calibrate.go).
type finished struct {
	score, lex  float64
	ev          evidence
	cov, phrase float32
}

// finish turns coverage q into the final score of category c by scoring
// its short fields as phrases. With e non-nil it also records the parts.
// masks, when not nil, are c's fields for the query's candidate terms
// (candMasks), for doubt.
func (x *Index) finish(p *parsed, c uint32, q float32, e *Explanation, masks []uint16) finished {
	var (
		bestP     float32
		bestElem  []uint32
		pairsSeen uint64
		qQual     [maxQueryWords]float32
	)
	for elem := range x.elements(c) {
		var elemW, elemHit float32
		var qHit uint64
		prevWord := -1
		curated := curatedFields&(1<<(elem[0]&^elemMark)) != 0
		for _, t := range elem[1:] {
			w := x.weight[t]
			elemW += w
			tw, ok := p.find(t)
			if ok && !curated && p.words[tw.word].kind == KindRelated {
				ok = false // as in accumulate: related words count in curated fields only
			}
			if !ok {
				prevWord = -1
				continue
			}
			elemHit += w * tw.quality
			qHit |= 1 << tw.word
			qQual[tw.word] = max(qQual[tw.word], tw.quality)
			if prevWord >= 0 {
				for i, pr := range p.pairs {
					if int(pr[0]) == prevWord && pr[1] == tw.word {
						pairsSeen |= 1 << i
					}
				}
			}
			prevWord = int(tw.word)
		}
		if qHit == 0 {
			continue
		}
		var qw float32
		for m := qHit; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			qw += p.words[i].weight * qQual[i]
			qQual[i] = 0
		}
		if v := elemHit / elemW * qw / p.total; v > bestP {
			bestP, bestElem = v, elem
		}
	}
	var adj float32
	for m := pairsSeen; m != 0; m &= m - 1 {
		pr := p.pairs[bits.TrailingZeros64(m)]
		adj += (p.words[pr[0]].weight + p.words[pr[1]].weight) / 2
	}
	adj = min(1, adj/p.total)
	// Strengths above 1 can push the sum past the query's weight; a
	// fuzzy match can never be made up for.
	q = min(q, p.maxCoverage)
	score := x.combine(q, bestP, adj)
	var bestField Field
	if len(bestElem) > 0 {
		bestField = Field(bestElem[0] &^ elemMark)
	}
	ev := x.doubt(p, c, bestP, bestField, masks)
	lex := score
	if ev.doubted() {
		score *= float32(x.tune.doubtFactor)
	}
	if e != nil {
		e.Coverage, e.Phrase, e.Adjacency, e.Doubt = float64(q), float64(bestP), float64(adj), ev.reason()
		if bestP > 0 {
			e.BestPhrase = x.elementText(bestElem)
		}
	}
	return finished{score: float64(score), lex: float64(lex), ev: ev, cov: q, phrase: bestP}
}

// elements yields the short fields of category c as stored: each starts
// with its elemMark|field entry, followed by its term ids.
func (x *Index) elements(c uint32) iter.Seq[[]uint32] {
	return func(yield func([]uint32) bool) {
		toks := x.elems[x.elemStart[c]:x.elemStart[c+1]]
		for start := 0; start < len(toks); {
			end := start + 1
			for end < len(toks) && toks[end]&elemMark == 0 {
				end++
			}
			if !yield(toks[start:end]) {
				return
			}
			start = end
		}
	}
}

// elementText renders a stored short field ("pattern: run mail server").
func (x *Index) elementText(toks []uint32) string {
	var b strings.Builder
	for i, t := range toks {
		if t&elemMark != 0 {
			b.WriteString(Field(t &^ elemMark).String())
			b.WriteString(":")
			continue
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.terms[t])
	}
	return b.String()
}

type qcand struct {
	cat uint32
	q   float32
}

// best keeps the k best items offered, the worst of them on top
// (items[0]), so a newcomer is compared with one item. items must have
// room for k. It is the one heap
// ranking uses: for the categories worth scoring by their upper bounds,
// and for the results by their scores. Generic rather than
// container/heap, whose interface boxing would allocate per push.
type best[T any] struct {
	items []T
	k     int
	worse func(a, b T) bool // a ranks below b
}

func (h *best[T]) full() bool { return len(h.items) >= h.k }

// offer adds v, and returns what no longer fits, if anything: v itself,
// or the item it displaced.
func (h *best[T]) offer(v T) (dropped T, ok bool) {
	if !h.full() {
		// Within the capacity the caller gave (at least k): append
		// would make escape analysis move that storage to the heap.
		h.items = h.items[:len(h.items)+1]
		h.items[len(h.items)-1] = v
		for i := len(h.items) - 1; i > 0; { // sift up
			parent := (i - 1) / 2
			if !h.worse(h.items[i], h.items[parent]) {
				break
			}
			h.items[i], h.items[parent] = h.items[parent], h.items[i]
			i = parent
		}
		return dropped, false
	}
	if h.k == 0 || !h.worse(h.items[0], v) {
		return v, true
	}
	dropped, h.items[0] = h.items[0], v
	for i := 0; ; { // sift down
		l := 2*i + 1
		if l >= len(h.items) {
			break
		}
		m := l
		if r := l + 1; r < len(h.items) && h.worse(h.items[r], h.items[l]) {
			m = r
		}
		if !h.worse(h.items[m], h.items[i]) {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return dropped, true
}

// hitHeap is best[hit] ordered by byScore, written out so that the
// comparison is a direct call: through best's func field, escape analysis
// must assume the hits escape, and its storage moves to the heap.
type hitHeap struct {
	items []hit
	k     int
}

func (h *hitHeap) full() bool { return len(h.items) >= h.k }

func hitWorse(a, b *hit) bool { return byScore(a.Scored, b.Scored) > 0 }

// offer adds v if it ranks among the k best, as best.offer does.
func (h *hitHeap) offer(v hit) {
	if !h.full() {
		// Within the capacity the caller gave (at least k): append
		// would make escape analysis move that storage to the heap.
		h.items = h.items[:len(h.items)+1]
		h.items[len(h.items)-1] = v
		for i := len(h.items) - 1; i > 0; { // sift up
			parent := (i - 1) / 2
			if !hitWorse(&h.items[i], &h.items[parent]) {
				break
			}
			h.items[i], h.items[parent] = h.items[parent], h.items[i]
			i = parent
		}
		return
	}
	if h.k == 0 || !hitWorse(&h.items[0], &v) {
		return
	}
	h.items[0] = v
	for i := 0; ; { // sift down
		l := 2*i + 1
		if l >= len(h.items) {
			break
		}
		m := l
		if r := l + 1; r < len(h.items) && hitWorse(&h.items[r], &h.items[l]) {
			m = r
		}
		if !hitWorse(&h.items[m], &h.items[i]) {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}
