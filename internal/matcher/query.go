package matcher

import (
	"math"
	"slices"
	"strings"

	"github.com/three-good-sources/3gs/internal/matcher/words"
)

// Query analysis: a query becomes its words, each with the terms of the
// index it meets (exactly, split, by prefix, typo, abbreviation or related
// word), how well, and its weight. Nothing here looks at a category's
// score; ranking (rank.go) starts from what parse returns.

const (
	// maxQueryWords bounds the distinct words a query is scored on; the
	// rest of a longer query is ignored (the schema already caps a query
	// at 500 characters).
	maxQueryWords = 48
	// minFuzzyLen is the shortest query word that may match by typo or
	// prefix; twoTypoLen the shortest that may have two typos.
	minFuzzyLen = 4
	twoTypoLen  = 8
	// firstLetterFreeLen: words shorter than this must keep their first
	// letter to match by typo.
	firstLetterFreeLen = 8
	// maxPrefixTerms: a prefix that starts more terms than this is too
	// vague to guess from ("data" → dataset, datab, datacent, ...).
	maxPrefixTerms = 8
)

// Ways a query word meets a term, best first.
const (
	KindNone         MatchKind = iota // the registry does not know the word
	KindExact                         // same stem
	KindSplit                         // a joined word split into two known words
	KindPrefix                        // one is a prefix of the other
	KindTypo                          // within edit distance 1 (2 for 8+ letters)
	KindAbbreviation                  // an abbreviation's expansion (data/abbreviations.txt)
	KindRelated                       // a synonym, narrower or broader word (data/related.txt)
)

func (k MatchKind) String() string { return kindNames[k] }

// Long misspelled words often defeat the stemmer, which then leaves a
// suffix the registry's stem lacks: "spceification" stems to "spceific",
// three edits from "specif". So a long word nothing else explains is
// compared, as a last resort, with the terms that share its first two
// letters, allowing one edit per four letters of the word as typed.
// longTypoScan bounds the
// terms compared, so a huge registry pays at most that.
const longTypoScan = 1024

const (
	splitQuality = 0.9
	minSplitLen  = 3 // shortest half of a split compound
)

// MatchKind says how a query word met a term.
type MatchKind uint8

var kindNames = [...]string{"unknown", "exact", "split", "prefix", "typo", "abbreviation", "related"}

// qword is one distinct word of a query.
type qword struct {
	raw    string
	stem   string
	kind   MatchKind
	weight float32
	cands  []cand  // terms it meets; empty when unknown
	best   float32 // the best quality among cands (0 when unknown)
	// zipf and common are words.Zipf(raw), looked up once per query word.
	zipf   float32
	common bool
	// generic is isGeneric(stem), which doubt reads per category.
	generic bool
	// vec is words.Vector(raw), which the semantic channel and strangers
	// read; meanVec is the vector the question's meaning takes for the
	// word (queryMeaning): vec, or for a word that meets no term its
	// head's (headVector). sifSem and sifMeaning are its SIF weights
	// there, sif with semSIF and meaningSIF.
	vec, meanVec       int32
	sifSem, sifMeaning float32
}

type cand struct {
	term    uint32
	quality float32
}

// parsed is an analyzed query.
type parsed struct {
	words []qword
	seq   []uint8    // word index at each position, in query order
	pairs [][2]uint8 // distinct adjacent word pairs, in order
	total float32    // Σ weight
	// maxCoverage is 1 − Σ weight·(1 − best quality)/total over the words
	// that meet some term: what is left once the part of the query that
	// only typos, prefixes or splits reach is taken out. It caps coverage
	// so that a misspelled query never scores as a near-exact one,
	// however prominent the term it meets.
	maxCoverage float32

	// lookup finds the query word a term belongs to when scanning a
	// category's fields: a 1024-bit filter, then a short list.
	filter [16]uint64
	lookup []termWord

	candBuf []cand // storage of the words' cands

	// resolved and resolvedCands hold what resolve reported for the word
	// being parsed, before put records it (emit).
	resolved      []qword
	resolvedCands []cand

	// stranger is what strangers last found for this query (bestFactors),
	// which a second ranking of it (MatchMore) reads back.
	stranger strangerMemo
}

// strangerMemo is strangers' answer for a category and the evidence it
// read: the words the category left unmet, and its aliens.
type strangerMemo struct {
	ok                   bool
	cat                  uint32
	left, aliens         uint64
	strangers, farAliens int
}

type termWord struct {
	term    uint32
	word    uint8
	quality float32
}

func filterBit(t uint32) (int, uint64) {
	h := (t * 2654435761) >> 22 // top 10 bits
	return int(h >> 6), 1 << (h & 63)
}

func (p *parsed) find(t uint32) (termWord, bool) {
	i, bit := filterBit(t)
	if p.filter[i]&bit == 0 {
		return termWord{}, false
	}
	for _, tw := range p.lookup {
		if tw.term == t {
			return tw, true
		}
	}
	return termWord{}, false
}

// parse analyzes a query against the index's vocabulary.
func (x *Index) parse(query string) (*parsed, error) {
	p := &parsed{}
	if err := x.parseInto(query, p); err != nil {
		return nil, err
	}
	return p, nil
}

// reset empties p for another query, keeping its storage.
func (p *parsed) reset() {
	*p = parsed{words: p.words[:0], seq: p.seq[:0], pairs: p.pairs[:0], lookup: p.lookup[:0], candBuf: p.candBuf[:0],
		resolved: p.resolved[:0], resolvedCands: p.resolvedCands[:0]}
}

// newWord is the query word a resolved word becomes, before
// decayUnknown: its weight, best quality, commonness and genericity. Its
// cands are the caller's.
func (x *Index) newWord(raw, st string, kind MatchKind, cands []cand) qword {
	var w, best float32
	z, common := words.Zipf(raw)
	for _, c := range cands {
		w = max(w, x.weight[c.term])
		best = max(best, c.quality)
	}
	generic := isGeneric(st)
	if len(cands) == 0 {
		switch {
		case generic:
			w = float32(x.tune.unknownWeight * x.tune.genericFactor)
		case common:
			// An ordinary English word the registry does not use
			// ("today", "belt") says less about the topic the
			// more common it is.
			w = float32(x.tune.unknownWeight) * commonness(&x.tune, z)
		default:
			w = float32(x.tune.unknownWeight)
		}
	}
	q := qword{raw: raw, stem: st, kind: kind, weight: w, cands: cands, best: best, zipf: z, common: common, generic: generic}
	q.vec = words.Vector(raw)
	q.meanVec = q.vec
	if q.vec < 0 && len(cands) == 0 && !generic && x.meaning != nil {
		q.meanVec = x.headVector(raw)
	}
	q.sifSem, q.sifMeaning = sif(&q, semSIF), sif(&q, meaningSIF)
	return q
}

// put records a query word (its cands copied into p's own storage), or
// one more occurrence of a word already seen.
func (p *parsed) put(w *qword) {
	i := slices.IndexFunc(p.words, func(o qword) bool { return o.stem == w.stem })
	if i < 0 {
		if len(p.words) == maxQueryWords {
			return
		}
		i = len(p.words)
		own := *w
		own.cands = nil
		if len(w.cands) > 0 {
			start := len(p.candBuf)
			p.candBuf = append(p.candBuf, w.cands...)
			own.cands = p.candBuf[start:len(p.candBuf):len(p.candBuf)]
		}
		p.words = append(p.words, own)
	}
	p.seq = append(p.seq, uint8(i))
}

// wordMod is how a word resolved on behalf of another is reported: the
// words of an expanded abbreviation (abbrev), or the English word a
// misspelling was read as (typo: reported as the word typed, typoRaw, its
// exact candidates as typos of quality typoQ).
type wordMod struct {
	abbrev, typo bool
	typoRaw      string
	typoQ        float32
}

// emit reports a resolved word to p (p.resolved), as modified by mod.
func (x *Index) emit(p *parsed, mod wordMod, raw, st string, kind MatchKind, cands []cand) {
	switch {
	case mod.abbrev:
		if kind == KindExact {
			kind = KindAbbreviation
		}
	case mod.typo:
		raw = mod.typoRaw
		if kind == KindExact {
			kind = KindTypo
			var buf [8]cand
			scaled := buf[:0]
			for _, c := range cands {
				scaled = append(scaled, cand{c.term, c.quality * mod.typoQ})
			}
			cands = scaled
		}
	}
	start := len(p.resolvedCands)
	p.resolvedCands = append(p.resolvedCands, cands...)
	p.resolved = append(p.resolved, x.newWord(raw, st, kind, p.resolvedCands[start:len(p.resolvedCands):len(p.resolvedCands)]))
}

// parseInto is parse into p, whose storage it reuses.
func (x *Index) parseInto(query string, p *parsed) error {
	return x.parseWith(query, p, true)
}

// parseWith is parseInto, with the words of the query resolved through
// x.wordMemo (memo) or each time (the plain path it must equal).
func (x *Index) parseWith(query string, p *parsed, memo bool) error {
	if strings.TrimSpace(query) == "" {
		return ErrEmptyQuery
	}
	p.reset()
	any := false
	scan(strings.ToLower(query), nil, func(raw string) {
		any = true
		ws := x.resolveWord(raw, p, memo)
		for i := range ws {
			p.put(&ws[i])
		}
	}, nil)
	if !any {
		return ErrOnlyStopWords
	}
	p.decayUnknown(&x.tune)
	for k := 1; k < len(p.seq); k++ {
		pair := [2]uint8{p.seq[k-1], p.seq[k]}
		if pair[0] != pair[1] && !slices.Contains(p.pairs, pair) && len(p.pairs) < 64 {
			p.pairs = append(p.pairs, pair)
		}
	}
	var fuzzLoss float32
	for i, w := range p.words {
		if len(w.cands) > 0 {
			fuzzLoss += w.weight * (1 - w.best)
		}
		for _, c := range w.cands {
			if _, dup := p.find(c.term); dup {
				continue // a term claimed by an earlier word stays with it
			}
			fi, bit := filterBit(c.term)
			p.filter[fi] |= bit
			p.lookup = append(p.lookup, termWord{c.term, uint8(i), c.quality})
		}
	}
	p.maxCoverage = 1 - fuzzLoss/p.total
	return nil
}

// decayUnknown lets the words the registry does not explain add up less
// and less: heaviest first, the k-th keeps 1/k^unknownDecay of its weight.
// In a short query the unknown word is the topic; in a long, rambling one
// most are filler ("I keep fighting the borrow checker ..."), and a
// question should not score lower for being asked in full sentences.
func (p *parsed) decayUnknown(t *tuning) {
	var store [maxQueryWords]int
	unknown := store[:0]
	for i, w := range p.words {
		if (len(w.cands) == 0 || w.kind == KindRelated) && !w.generic {
			unknown = append(unknown, i)
		}
	}
	slices.SortStableFunc(unknown, heavierFirst[int](p))
	for k, i := range unknown {
		p.words[i].weight /= float32(math.Pow(float64(k+1), t.unknownDecay))
	}
	p.total = 0
	for _, w := range p.words {
		p.total += w.weight
	}
}

// heavierFirst orders indexes of p.words by weight, heaviest first.
func heavierFirst[T int | uint8](p *parsed) func(a, b T) int {
	return func(a, b T) int {
		switch wa, wb := p.words[a].weight, p.words[b].weight; {
		case wa > wb:
			return -1
		case wa < wb:
			return 1
		}
		return 0
	}
}
