package matcher

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/three-good-sources/3gs/internal/matcher/typo"
	"github.com/three-good-sources/3gs/internal/matcher/words"
)

// fieldsFor is where in category c the term t, met by query word w, counts:
// the fields it is in, and for a related word only those the curator wrote
// about the category itself (see accumulate).
func (x *Index) fieldsFor(w *qword, t, c uint32) (uint8, bool) {
	mask, ok := x.maskOf(t, c)
	if w.kind == KindRelated {
		mask &= curatedFields
		ok = ok && mask != 0
	}
	return mask, ok
}

// resolve finds the terms a query word meets and reports them through add
// (once, twice for a split compound, once per word of an abbreviation).
// Depth 1 marks the words of an expanded abbreviation, which are not
// expanded again.
func (x *Index) resolve(raw string, depth int, p *parsed, mod wordMod) {
	add := func(raw, st string, kind MatchKind, cands []cand) { x.emit(p, mod, raw, st, kind, cands) }
	st := stemQuery(raw)
	if t, ok := x.term(st); ok {
		add(raw, st, KindExact, []cand{{t, 1}})
		return
	}
	if t, ok := x.term(raw); ok { // a name the stemmer would mangle
		add(raw, raw, KindExact, []cand{{t, 1}})
		return
	}
	if exp, ok := abbreviations[raw]; ok && depth == 0 {
		for _, w := range exp {
			x.resolve(w, 1, p, wordMod{abbrev: true})
		}
		return
	}
	// An ordinary English word is taken as written: never "corrected"
	// into a registry term ("transaction" is not "translation"), only
	// related to one.
	if _, common := words.Zipf(raw); common {
		x.addRelated(raw, st, p, mod)
		return
	}
	n := utf8.RuneCountInString(raw)
	if n < minFuzzyLen || n != len(raw) {
		x.addRelated(raw, st, p, mod)
		return
	}
	if at, left, right, ok := x.split(raw); ok {
		add(raw[:at], x.terms[left], KindSplit, []cand{{left, splitQuality}})
		add(raw[at:], x.terms[right], KindSplit, []cand{{right, splitQuality}})
		return
	}
	cands := x.fuzzy(st)
	// A misspelling of an ordinary English word ("hikng", "begginers")
	// is read as that word, unless the registry offers a term at least as
	// close: the asker more likely meant a word of the language than a
	// registry term two edits away.
	if fixed, d, ok := englishTypo(raw); ok && depth == 0 && (len(cands) == 0 || d < bestTypoDist(st, cands, x.terms)) {
		x.resolve(fixed, 1, p, wordMod{typo: true, typoRaw: raw, typoQ: typoQuality(d, len(raw))})
		return
	}
	if len(cands) == 0 && n >= twoTypoLen {
		x.longTypo(st, n, cands.keep)
	}
	if len(cands) == 0 {
		x.addRelated(raw, st, p, mod)
		return
	}
	kind := KindTypo
	if x.typoFree(st, cands) {
		kind = KindPrefix
	}
	add(raw, st, kind, cands)
}

// split finds a joined word whose halves are both known: "mailserver".
// The left half is looked up as written (it is rarely inflected), the
// right one stemmed; the most even split wins. raw is ASCII.
func (x *Index) split(raw string) (at int, left, right uint32, ok bool) {
	n := len(raw)
	bestBalance := 0
	for i := minSplitLen; n-i >= minSplitLen; i++ {
		tl, ok := x.term(raw[:i])
		if !ok {
			continue
		}
		if tr, ok := x.term(stem(raw[i:])); ok && min(i, n-i) > bestBalance {
			at, bestBalance, left, right = i, min(i, n-i), tl, tr
		}
	}
	return at, left, right, at > 0
}

// candList is the terms a word may stand for, each once, with the best
// quality it was found with.
type candList []cand

func (cs *candList) keep(t uint32, q float32) {
	for k := range *cs {
		if (*cs)[k].term == t {
			(*cs)[k].quality = max((*cs)[k].quality, q)
			return
		}
	}
	*cs = append(*cs, cand{t, q})
}

// fuzzy finds the terms a stem st the index lacks may stand for: those
// within its typo distance, those it starts, and the longest known term
// that starts it.
func (x *Index) fuzzy(st string) candList {
	var cands candList
	// The typo rule applies to the stem, which is what is compared:
	// "penetration" is "penetr", too short for two edits.
	maxDist := 0
	switch {
	case len(st) >= twoTypoLen:
		maxDist = 2
	case len(st) >= minFuzzyLen:
		maxDist = 1
	}
	if maxDist > 0 {
		x.typos.Near(st, maxDist, x.terms, func(t uint32, d int) {
			if !keepsFirstLetter(st, x.terms[t]) {
				return
			}
			cands.keep(t, typoQuality(d, max(len(st), len(x.terms[t]))))
		})
	}
	// The word starts a longer term ("keepass" → "keepassxc") ...
	if lo, hi := x.prefixRange(st); hi > lo && hi-lo <= maxPrefixTerms {
		for t := lo; t < hi; t++ {
			cands.keep(uint32(t), prefixQuality(len(st), len(x.terms[t])))
		}
	}
	// ... or a known term starts the word ("esphomes" → "esphom").
	for l := len(st) - 1; l >= minFuzzyLen && l*5 >= len(st)*3; l-- {
		if t, ok := x.term(st[:l]); ok {
			cands.keep(t, prefixQuality(l, len(st)))
			break
		}
	}
	return cands
}

func (x *Index) longTypo(st string, n int, keep func(uint32, float32)) {
	if len(st) < 4 {
		return
	}
	lo, hi := x.prefixRange(st[:2])
	if hi-lo > longTypoScan {
		return
	}
	maxD := n / 4
	for t := lo; t < hi; t++ {
		term := x.terms[t]
		if len(term) < len(st)-maxD || len(term) > len(st)+maxD || len(term) < minFuzzyLen {
			continue
		}
		if d := typo.Distance(st, term); d <= maxD {
			keep(uint32(t), typoQuality(d, n))
		}
	}
}

// keepsFirstLetter is the typo rule both the registry's terms and ordinary
// English words are matched by: a word shorter than firstLetterFreeLen
// is only forgiven typos after its first letter, where nearly all typos
// are ("test" is not "best").
func keepsFirstLetter(word, candidate string) bool {
	return len(word) >= firstLetterFreeLen || word[0] == candidate[0]
}

// bestTypoDist is the smallest edit distance between st and the terms of
// cands (prefix candidates count by the letters they lack).
func bestTypoDist(st string, cands []cand, terms []string) int {
	best := math.MaxInt
	for _, c := range cands {
		best = min(best, typo.Distance(st, terms[c.term]))
	}
	return best
}

// addRelated reports a word the vocabulary lacks: through the registry
// terms WordNet relates it to, or as unknown.
func (x *Index) addRelated(raw, st string, p *parsed, mod wordMod) {
	if isGeneric(st) {
		x.emit(p, mod, raw, st, KindNone, nil)
		return
	}
	cands := x.relatedOf(st)
	if len(cands) > 0 {
		x.emit(p, mod, raw, st, KindRelated, cands)
		return
	}
	x.emit(p, mod, raw, st, KindNone, nil)
}

// relatedOf is the registry terms related to stem st, a word the
// vocabulary lacks, for addRelated (nil when none): found at build for
// every stem of the list (relatedTerms), so looked up here in one probe.
func (x *Index) relatedOf(st string) []cand {
	if x.relatedDone != nil { // nil for an Index not made by Build
		<-x.relatedDone
	}
	return x.related.find(st)
}

// nextField is the first space-separated field of s and what follows it,
// as strings.FieldsSeq would yield them (ASCII spaces: related.txt's).
func nextField(s string) (field, rest string) {
	i := 0
	for i < len(s) && asciiSpace(s[i]) {
		i++
	}
	j := i
	for j < len(s) && !asciiSpace(s[j]) {
		j++
	}
	return s[i:j], s[j:]
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// typoFree reports whether every candidate is a prefix match, for the
// explanation's label.
func (x *Index) typoFree(st string, cands []cand) bool {
	for _, c := range cands {
		t := x.terms[c.term]
		if !strings.HasPrefix(t, st) && !strings.HasPrefix(st, t) {
			return false
		}
	}
	return true
}

// typoQuality: one typo in a 4-letter word leaves 0.7 of the evidence, one
// in an 8-letter word 0.85, two in an 8-letter word 0.7.
func typoQuality(dist, length int) float32 {
	return float32(max(0.2, 1-1.2*float64(dist)/float64(length)))
}

// prefixQuality grows with the share of the longer word that the shorter
// one covers: "keepass" in "keepassxc" is 0.83.
func prefixQuality(short, long int) float32 {
	return float32(0.6 + 0.3*float64(short)/float64(long))
}
