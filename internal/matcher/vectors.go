package matcher

import (
	"math"
	"sync/atomic"

	"github.com/three-good-sources/3gs/internal/matcher/words"
)

// maxSimTerms: past this many registry terms with vectors, comparing
// every query word with all of them would cost more than a match may; such
// registries match without word vectors.
const maxSimTerms = 30_000

// The semantic channel. Coverage needs the asker's words, or their
// dictionary relatives, to be the curator's; a paraphrase ("my wild yeast
// jar stopped bubbling") shares almost none. For registries small enough to
// compare every query word with every curated word (semAllCats), each
// category also gets a semantic score: for each query word, its closest
// curated word of that category by word vectors (cosine above
// semAlignFloor, rescaled to 0..1; description words count descWeight),
// averaged with SIF weights (semSIF/(semSIF+p), p the word's frequency), so
// ordinary words count little. blend keeps what exceeds the registry's
// mean (in a registry all about software every category is somewhat close
// to "compiler") and adds semWeight of it, times what the lexical score
// leaves to 1, to the categories that are not confident answers.
const (
	semAllCats    = 4096
	semAlignFloor = 0.3
	semSIF        = 3e-5
	descWeight    = 0.8
	semWeight     = 0.5
)

// simProse marks an entry of Index.simPost whose category has the term in
// its description only, where it counts descWeight. Category numbers stay
// below it.
const simProse = 1 << 31

// sif is a/(a+p), p the word's frequency: 1 for a word the frequency list
// lacks. A query word holds its two (qword.sifSem, for how much it counts
// in the semantic score, and qword.sifMeaning).
func sif(w *qword, a float64) float32 {
	z, ok := w.zipf, w.common
	if !ok {
		return 1
	}
	p := math.Pow(10, float64(z)-9)
	return float32(a / (a + p))
}

// semantic fills s.sem for the categories some query word is close to and
// lists them in s.semTouched, and reports whether it ran: it does nothing
// for a large registry. Each query word is compared with every curated
// word that has a vector: a few hundred in a registry of forty categories.
func (x *Index) semantic(p *parsed, s *scratch) bool {
	if len(x.simTerms) == 0 || len(x.slugs) > semAllCats {
		return false
	}
	var weights [maxQueryWords]float32
	var den float32
	for i, w := range p.words {
		if !w.generic {
			weights[i] = w.sifSem
			den += weights[i]
		}
	}
	if den == 0 {
		return true
	}
	for i, w := range p.words {
		if weights[i] == 0 {
			continue // generic
		}
		q := w.vec
		if q < 0 {
			continue
		}
		wt := weights[i] / den
		if e := x.semCache.get(q); e != nil {
			// The same word met before: its closest categories are
			// what the pass below found then, in the same order.
			for _, cv := range e.near {
				cat, val := uint32(cv>>32), math.Float32frombits(uint32(cv))
				if s.sem[cat] == 0 {
					s.semTouched = append(s.semTouched, cat)
				}
				s.sem[cat] += wt * val
			}
			continue
		}
		x.semNear(q, s)
		x.semCache.put(q, s.semWord, s.semNow)
		for _, cat := range s.semWord {
			if s.sem[cat] == 0 {
				s.semTouched = append(s.semTouched, cat)
			}
			s.sem[cat] += wt * s.semNow[cat]
			s.semNow[cat] = 0
		}
		s.semWord = s.semWord[:0]
	}
	return true
}

// semNear lists in s.semWord the categories whose curated words are
// within the cosine floor of the word vector q, in the order the rows
// reach them, with each one's best rescaled closeness in s.semNow.
func (x *Index) semNear(q int32, s *scratch) {
	qn := words.Norm(q)
	if cap(s.dots) < len(x.simNorms) {
		s.dots = make([]int32, len(x.simNorms))
	}
	// One pass of exact integer dot products over the registry's rows,
	// then the same cosine, in float32, as cosine(q, vid). Most rows are
	// far from any one word: a row whose dot product is below the floor
	// times the norms, with a margin far wider than float32 rounding,
	// cannot pass it and is skipped with a multiplication instead of the
	// division (a dot product of 0 or less included).
	dots := s.dots[:len(x.simNorms)]
	words.DotRows(words.Row(q), x.simRows, dots)
	skip := qn * (semAlignFloor - 1e-4)
	for i, d := range dots {
		if float32(d) < skip*x.simNorms[i] {
			continue
		}
		c := float32(d) / (qn * x.simNorms[i])
		if c <= semAlignFloor {
			continue
		}
		v := (c - semAlignFloor) / (1 - semAlignFloor)
		for _, e := range x.simPost[x.simPostStart[i]:x.simPostStart[i+1]] {
			cat := e &^ simProse
			val := v
			if e&simProse != 0 {
				val *= descWeight
			}
			if val > s.semNow[cat] {
				if s.semNow[cat] == 0 {
					s.semWord = append(s.semWord, cat)
				}
				s.semNow[cat] = val
			}
		}
	}
}

// semCache remembers, per word vector, what semNear found for it: the
// index never changes, so neither does the answer, and the words of
// questions repeat (the same topic words, the same ordinary ones). It is
// two-way set-associative (see store2), semCacheSlots entries of at most
// semCacheMax categories each, so its size is
// bounded whatever the traffic; lookups and stores are atomic, so
// concurrent queries share it without locks.
type semCache struct {
	slots []atomic.Pointer[semEntry]
}

type semEntry struct {
	vid  int32
	near []uint64 // category<<32 | float32 bits of its closeness, in semNear's order
}

const (
	semCacheSlots = 4096
	semCacheMax   = 256
)

func (c *semCache) get(vid int32) *semEntry {
	if len(c.slots) == 0 {
		return nil
	}
	h := semSlot(vid)
	if e := c.slots[h].Load(); e != nil && e.vid == vid {
		return e
	}
	if e := c.slots[h^1].Load(); e != nil && e.vid == vid {
		return e
	}
	return nil
}

func semSlot(vid int32) uint32 { return uint32(vid) * 2654435761 >> 20 & (semCacheSlots - 1) }

func (c *semCache) put(vid int32, cats []uint32, vals []float32) {
	if len(c.slots) == 0 || len(cats) > semCacheMax {
		return
	}
	e := &semEntry{vid: vid, near: make([]uint64, len(cats))}
	for i, cat := range cats {
		e.near[i] = uint64(cat)<<32 | uint64(math.Float32bits(vals[cat]))
	}
	h := semSlot(vid)
	store2(&c.slots[h], &c.slots[h^1], e)
}

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
	// Their heap lives in s: a no-match answer's long list asks for as
	// many as it lists, and allocating them was its largest allocation
	// in the matcher. It holds what a hit needs of them, 24 bytes, not
	// the hits (160 bytes, a string among them, so every move of one in
	// the heap went through the write barrier): at 1,000 categories
	// heaping the long list's 200 hits was a sixth of a not-confident
	// answer (BenchmarkMatchMoreLarge/generated-1000). The hits are made
	// for those kept only; which are kept is the same, as the order is
	// total (slugs are unique), and sortHits orders them below.
	k := max(semExtra, limit)
	if cap(s.semOnly) < k {
		s.semOnly = make([]semOnly, 0, k)
	}
	vectorsOnly := best[semOnly]{items: s.semOnly[:0], k: k, worse: x.semOnlyWorse}
	for _, c := range s.semTouched {
		if s.sem[c] > 0 && !lexicalHit(out[:lexical], c) {
			vectorsOnly.offer(semOnly{roundScore(semWeight * float64(s.sem[c]) * x.tune.doubtFactor), c, s.sem[c], gap(c)})
		}
		s.sem[c] = 0
	}
	for _, v := range vectorsOnly.items {
		out = append(out, hit{Scored: Scored{Slug: x.slugs[v.cat], Score: v.score}, cat: v.cat, sem: v.sem, semGap: v.gap, ev: evidence{kind: doubtVectorsOnly}})
	}
	s.semTouched = s.semTouched[:0]
	sortHits(out, s)
	x.orderTail(out, s)
	return out
}

// semOnly is a category only word vectors reach, as blend keeps it: its
// score, and its semantic score and gap (hit.sem, hit.semGap).
type semOnly struct {
	score    float64
	cat      uint32
	sem, gap float32
}

// semOnlyWorse: a ranks below b as their hits would (hitWorse): by
// score, then by slug.
func (x *Index) semOnlyWorse(a, b semOnly) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return x.slugs[a.cat] > x.slugs[b.cat]
}

// lexicalHit reports whether a lexical candidate is category c.
func lexicalHit(out []hit, c uint32) bool {
	for i := range out {
		if out[i].cat == c {
			return true
		}
	}
	return false
}

// orderTail reorders the candidates after the first candidatePool, which
// neither the answer nor its confidence reads, by closeness in meaning as
// well as by words: a weak lexical hit that shares only an ordinary word
// with the query gains the word-vector score a category in doubt does, so
// a category close in meaning but sharing no word is not pushed out of a
// long list by it. Scores stay at or below the last head candidate's, so
// the list is still in score order.
func (x *Index) orderTail(out []hit, s *scratch) {
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
	sortHits(tail, s)
}
