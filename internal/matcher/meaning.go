package matcher

import (
	"cmp"
	"math"
	"slices"

	"github.com/three-good-sources/3gs/internal/matcher/words"
)

// Closeness in meaning of the whole question, for the long lists of a
// no-match answer. The semantic channel (vectors.go) scores a category by
// each query word's closest curated word: it finds the category that
// shares a paraphrased word with the question, but in a registry of a
// thousand categories a category with many loosely chosen words is close
// to every question somewhere, and the one the question is about ("my
// fingertips hurt pressing the strings": guitar) sinks among them.
// Comparing directions of whole texts asks the other thing: what the
// question is about as a whole, against what the curator wrote about each
// category as a whole.
//
// So each category has a meaning: the sum of the unit vectors of the
// curated words (slug, name, patterns, description) that have one, each
// weighted by its term's weight in the registry (rarer words say more
// about the topic), normalized and stored as int8 like the word vectors.
// A question's meaning is the sum of its non-generic words' unit vectors,
// weighted by their frequency as the semantic channel weighs them (sif,
// with meaningSIF). Past the
// first candidatePool, which the answer and its confidence read, a long
// list (limit above candidatePool) keeps the categories some query word
// meets, in their order, and goes on with the others by the cosine of the
// two meanings, while it is above zero. A query none of whose words has a
// vector (a product name, a word of another language) takes the meaning
// of the first categories it meets, weighted by their scores: what comes
// next is what is like them. This orders candidates only: no score that
// decides an answer reads it, nor the grounding.

// meaningSIF is the a of a question word's weight a/(a+p), p its
// frequency: ten times the semantic channel's semSIF, so ordinary words
// count more in a whole question's meaning than in its closest-word
// score. Chosen on the development sets at 1,000 categories (questions
// whose category the first answer missed, of 395): 1e-5 37, 3e-5 and
// 1e-4 34, 2e-4 to 5e-4 33, 1e-3 36.
const meaningSIF = 3e-4

// meaningSemBoost is how much of a category's semantic score (vectors.go:
// its closest curated words to the query's, above the registry's mean)
// is added to its cosine with the question when the semantic channel
// offered it: the whole question's direction finds the topic, the
// closest words vouch for a category that holds the question's very
// ideas. Chosen on the development sets at 1,000 categories (questions
// whose category the first answer missed, of 619): 0 52, 0.05 52, 0.2 49,
// 0.35 48, 0.5 48, 0.7 47, 1 48, 2 56, 4 63; 0.5 sits mid-plateau.
const meaningSemBoost = 0.5

// meaningScale maps a unit vector's components to int8.
const meaningScale = 127

// meanings fills x.meaning from the curated terms with word vectors
// (x.catVecs lists them per category); nothing when the semantic channel
// is off. One category's sum at a time: a float sum for every category at
// once was 25 MB of garbage at 100,000 categories.
func (x *Index) meanings() {
	if len(x.simVecs) == 0 {
		return
	}
	dims := words.Dims()
	sum := make([]float32, dims)
	x.meaning = make([]int8, len(x.slugs)*dims)
	for c, ks := range x.catVecs {
		clear(sum)
		for _, k := range ks {
			w := x.weight[x.simTerms[k]] / x.simNorms[k]
			for d, v := range x.simRows[int(k)*dims : int(k+1)*dims] {
				sum[d] += w * float32(v)
			}
		}
		quantize(sum, x.meaning[c*dims:(c+1)*dims])
	}
	x.meaningDims = dims
}

// quantize writes v, scaled to unit length, into q as int8; all zeros
// when v is.
func quantize(v []float32, q []int8) {
	var s float64
	for _, a := range v {
		s += float64(a) * float64(a)
	}
	if s == 0 {
		return
	}
	k := meaningScale / float32(math.Sqrt(s))
	for d, a := range v {
		q[d] = int8(max(-meaningScale, min(meaningScale, math.Round(float64(a*k)))))
	}
}

// queryMeaning is p's meaning as int8, or nil when no non-generic word of
// it has a vector.
func (x *Index) queryMeaning(p *parsed) []int8 {
	sum := make([]float32, x.meaningDims)
	found := false
	for _, w := range p.words {
		if w.generic {
			continue
		}
		id := w.meanVec
		if id < 0 {
			continue
		}
		found = true
		wt := w.sifMeaning / words.Norm(id)
		for d, v := range words.Row(id) {
			sum[d] += wt * float32(v)
		}
	}
	if !found {
		return nil
	}
	q := make([]int8, x.meaningDims)
	quantize(sum, q)
	return q
}

// byMeaning is the long list of rank: out's first candidatePool as they
// are, then those of the rest some query word meets (not word vectors
// alone), then the categories closest in meaning to the query, or to the
// first of out when no word of the query has a vector (see meanings), up
// to limit; those word vectors alone reached (out's doubtVectorsOnly)
// come closer by meaningSemBoost. The categories it adds score the last
// listed one's score (at most what word vectors alone could) times their
// cosine, so the list stays in score order.
func (x *Index) byMeaning(p *parsed, out []hit, limit int, s *scratch) []hit {
	if limit <= candidatePool || x.meaning == nil {
		return out
	}
	q := x.queryMeaning(p)
	own := q != nil
	if q == nil {
		q = x.hitsMeaning(out)
	}
	if q == nil {
		return out
	}
	n := len(x.slugs)
	dots, in := meaningWork(s, n)
	words.DotRows(q, x.meaning, dots)
	// nearDot is the least dot product of a category near the question
	// (Scored.Near): only the question's own meaning says it.
	nearDot := int32(math.MaxInt32)
	if own {
		var sum int64
		for _, d := range dots {
			sum += int64(d)
		}
		nearDot = int32(sum/int64(n)) + int32(math.Ceil(nearMargin*meaningScale*meaningScale))
		for i := range out {
			if h := &out[i]; h.ev.grounded || dots[h.cat] >= nearDot {
				h.Lead = leadKey(h.Score, dots[h.cat], h.sem)
			}
		}
		leadByMeaning(out, dots)
	}
	var list []hit
	if s != nil && cap(s.listed) >= limit {
		list = s.listed[:0]
	} else {
		list = make([]hit, 0, limit)
		if s != nil {
			s.listed = list
		}
	}
	var boosted []boost // the categories boosted, by category
	for i, h := range out {
		if i < candidatePool || h.ev.kind != doubtVectorsOnly {
			h.Near = dots[h.cat] >= nearDot
			list = append(list, h)
			in[h.cat/64] |= 1 << (h.cat % 64)
		} else {
			boosted = append(boosted, boost{h.cat, dots[h.cat], h.sem})
			dots[h.cat] += int32(meaningSemBoost * meaningScale * meaningScale * float64(h.sem))
		}
	}
	// Sorted by category, so each of the closest finds its own in a
	// binary search: scanning for it was quadratic in the list's length.
	slices.SortFunc(boosted, func(a, b boost) int { return cmp.Compare(a.cat, b.cat) })
	// The closest of the others, kept in a heap of as many as the list
	// has room for, then sorted: a registry of thousands is not sorted
	// whole for the few hundred shown.
	room := limit - len(list)
	if room <= 0 {
		return list
	}
	closest := best[near]{items: make([]near, 0, room), k: room, worse: nearWorse}
	for c, d := range dots {
		if d > 0 && in[c/64]&(1<<(c%64)) == 0 {
			closest.offer(near{uint32(c), d})
		}
	}
	slices.SortFunc(closest.items, func(a, b near) int {
		switch {
		case nearWorse(b, a):
			return -1
		case nearWorse(a, b):
			return 1
		}
		return 0
	})
	// No more than word vectors alone could score (blend).
	ceil := semWeight * x.tune.doubtFactor
	if len(list) > 0 {
		ceil = min(ceil, list[len(list)-1].Score)
	}
	// Each scores the ceiling scaled by its cosine: closest.items is in
	// descending order of dot, so the scores are too. A quantized row's
	// dot with itself can pass full, and a boost can add to it, hence
	// the cap. The ceiling is not lowered as the list goes on: compounded,
	// twenty cosines took every score to the floor, where lists merged by
	// score (a federated answer's) could no longer tell them apart.
	const full = meaningScale * meaningScale
	for _, c := range closest.items {
		score := max(roundScore(ceil*float64(min(c.dot, full))/full), minScore)
		dot, sem := c.dot, float32(0)
		if k, ok := slices.BinarySearchFunc(boosted, c.cat, func(b boost, cat uint32) int { return cmp.Compare(b.cat, cat) }); ok {
			dot, sem = boosted[k].dot, boosted[k].sem
		}
		h := hit{Scored: Scored{Slug: x.slugs[c.cat], Score: score, Near: dot >= nearDot}, cat: c.cat, ev: evidence{kind: doubtVectorsOnly}}
		if h.Near {
			h.Lead = leadKey(score, dot, sem)
		}
		list = append(list, h)
	}
	return list
}

// meaningWork is byMeaning's working memory for a registry of n
// categories: the dot product of each category's meaning with the
// question's (DotRows writes every one) and a bit per category, cleared,
// for those the list holds. Kept in s when there is one: they were made
// for every long list, 4 bytes and a bit a category (BenchmarkMatchMoreLarge
// /generated-1000, -benchmem).
func meaningWork(s *scratch, n int) (dots []int32, in []uint64) {
	words := (n + 63) / 64
	if s == nil {
		return make([]int32, n), make([]uint64, words)
	}
	if cap(s.meanDots) < n {
		s.meanDots = make([]int32, n)
	}
	if cap(s.meanIn) < words {
		s.meanIn = make([]uint64, words)
	}
	in = s.meanIn[:words]
	clear(in)
	return s.meanDots[:n], in
}

// nearMargin is how much closer than the registry's mean a category's
// meaning must be to the question's, in cosine, for the category to be
// near it (Scored.Near). Word vectors share a common direction, so
// whole texts' cosines run high (0.4 to 0.5 on average between a question
// and a category, 0.5 for "knitting patterns for beginners" and a
// category on shell scripts): only the margin over the rest says
// something. Chosen on the development sets' questions at 120 categories
// (blend-dev, 472 not-confident on-topic questions; right among the first
// five described). With the near ones filling the slots after the
// grounded: margin 0.05 0.619, 0.1 0.621, 0.15 0.625, 0.2 0.608. With
// the near ones competing with the grounded by one key (Scored.Lead,
// tools' byLead): 0.05 0.646, 0.1 0.640, 0.12 0.636, 0.13 0.629, 0.15
// 0.627 (dev, dev2, dev3 alone at 0.12: 0.611, 0.684, 0.688; at 0.15
// 0.603, 0.677, 0.688). Below 0.12 "quantum chromodynamics in rust"
// comes near a category on Python packaging: 0.12 is the lowest margin
// at which the frozen registry's far categories stay far.
const nearMargin = 0.12

// boost is a category byMeaning boosted by its semantic score: its dot
// product before the boost, and that score.
type boost struct {
	cat uint32
	dot int32
	sem float32
}

// near is a category and its query meaning's dot product with its own.
type near struct {
	cat uint32
	dot int32
}

// nearWorse: a is farther in meaning than b (ties: the later category).
func nearWorse(a, b near) bool {
	if a.dot != b.dot {
		return a.dot < b.dot
	}
	return a.cat > b.cat
}

// hitsMeaning is the meaning of the first hits, for a query none of whose
// words has a vector; nil when there are none.
func (x *Index) hitsMeaning(out []hit) []int8 {
	if len(out) == 0 {
		return nil
	}
	sum := make([]float32, x.meaningDims)
	for _, h := range out[:min(len(out), candidatePool)] {
		row := x.meaning[int(h.cat)*x.meaningDims : int(h.cat+1)*x.meaningDims]
		for d, v := range row {
			sum[d] += float32(h.Score) * float32(v)
		}
	}
	q := make([]int8, x.meaningDims)
	quantize(sum, q)
	return q
}

// minHead and minModifier are the shortest a compound's head and what
// comes before it may be for headVector: "rebase" is not a kind of base.
const (
	minHead     = 4
	minModifier = 3
)

// headVector is, for a word without a vector of its own that meets no
// term of the registry, the vector of
// the longest word it ends with that the curator wrote and that has one:
// English compounds name a kind of their last part ("microinverters",
// "elasticache"). -1 when there is none.
func (x *Index) headVector(raw string) int32 {
	for i := minModifier; len(raw)-i >= minHead; i++ {
		head := raw[i:]
		if _, ok := x.term(stemQuery(head)); !ok {
			continue
		}
		if id := words.Vector(head); id >= 0 {
			return id
		}
	}
	return -1
}

// meaningLead is how many of a long list's first categories
// leadByMeaning reorders, and meaningLeadWeight how much the cosine of
// a category's meaning with the question's adds to its score there.
// Chosen on the development sets' questions at 120 categories
// (blend-dev, 472 not-confident on-topic questions; right first / among
// the first five described candidates): weight 0 (no reordering)
// 0.331 / 0.544; 0.1 over 50 0.362 / 0.553; 0.15 over 10, 20 and 50
// 0.364 / 0.547, 0.544, 0.549; 0.2 over 20 0.369 / 0.544; 0.4 0.358 /
// 0.536; 0.8 0.337 / 0.536.
const (
	meaningLead       = 50
	meaningLeadWeight = 0.1
)

// meaningLeadSem is how much a category's semantic score (hit.sem: its
// closest curated words to each query word, above the registry's mean,
// vectors.go) adds to its key in leadByMeaning besides the cosine of the
// whole meanings: the whole question's direction and the question's very
// ideas each vouch for a category. Chosen on blend-dev as above, with the
// described candidates filled with near ones (tools.listNear; right
// first / among the first five): 0 0.362 / 0.585; 0.01 0.362 / 0.585;
// 0.025 0.367 / 0.587; 0.05 0.377 / 0.591; 0.075 0.377 / 0.591; 0.1
// 0.377 / 0.589; 0.2 0.379 / 0.587; 0.4 0.364 / 0.583.
const meaningLeadSem = 0.075

// leadByMeaning reorders the grounded categories among out's first
// meaningLead by their score plus meaningLeadWeight times the cosine of
// their meaning with the question's (dots) plus meaningLeadSem times
// their semantic score, and gives them the same
// scores in their new order, so the list stays in score order: the
// described candidates of a no-match answer are its first ones, and a
// category that shares a word with the question but not what it is about
// should not lead the one it is about. Only a long list (byMeaning) is
// reordered: the answer and its confidence read the first candidatePool
// of a short one, which this never touches.
func leadByMeaning(out []hit, dots []int32) {
	n := min(len(out), meaningLead)
	var at []int
	for i := range out[:n] {
		if out[i].ev.grounded {
			at = append(at, i)
		}
	}
	if len(at) < 2 {
		return
	}
	type keyed struct {
		h   hit
		key float64
	}
	ks := make([]keyed, len(at))
	scores := make([]float64, len(at))
	for k, i := range at {
		h := out[i]
		scores[k] = h.Score
		ks[k] = keyed{h, leadKey(h.Score, dots[h.cat], h.sem)}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		switch {
		case a.key > b.key:
			return -1
		case a.key < b.key:
			return 1
		}
		return 0
	})
	for k, i := range at {
		out[i] = ks[k].h
		out[i].Score = scores[k]
	}
}

// leadKey is a category's key in leadByMeaning and its Scored.Lead: its
// score, plus meaningLeadWeight times the cosine of its meaning with the
// question's (dot, as int8 rows give it), plus meaningLeadSem times its
// semantic score.
func leadKey(score float64, dot int32, sem float32) float64 {
	const full = meaningScale * meaningScale
	return score + meaningLeadWeight*float64(dot)/full + meaningLeadSem*float64(sem)
}
