package matcher

import (
	"iter"
	"math/bits"
	"strings"
)

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
