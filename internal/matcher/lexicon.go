package matcher

import (
	"cmp"
	_ "embed"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/three-good-sources/3gs/internal/matcher/typo"
	"github.com/three-good-sources/3gs/internal/matcher/words"
)

// Link qualities: how much of a direct match a related word is worth. A
// synonym is close to the curator's word; a narrower query word
// ("sourdough" for "bread") still lands in the topic; a broader one
// ("coffee" for "espresso") only points at it.
const (
	closeQuality  = 0.6
	narrowQuality = 0.55
	broadQuality  = 0.35
	// glossQuality links a word and the words of its definition, both
	// ways: "yeast" (defined with "bread" and "dough") to a category about
	// bread, and "dough" to one whose "bread" is defined with it. The
	// weakest link, as definitions also hold words beside the point.
	glossQuality = 0.3
)

// relatedTerms finds, for every stem the registry lacks, the registry
// terms WordNet relates it to (data/related.txt), with the quality of
// each link: what relatedOf answers for a query word outside the
// vocabulary, found at build in one read of the list
// (words.EachRelated), so that the list is neither looked up nor kept in
// memory while questions are answered.
//
// A stem's terms are, in order, those whose own related words hold it
// (the terms in order, each through its close, narrow, broad and gloss
// words, the best quality kept), then those in the stem's own
// definitions ("yeast" is defined with "bread") not already there. Only
// terms that stand as words of their own are looked up for the former
// (not joined compounds), and generic words are left out both ways:
// "guide" related to "lead" would tie any query to any category.
func relatedTerms(terms []string, word []bool, lookup func(string) (uint32, bool)) relatedTable {
	// The lines of the registry's own terms, kept (copied) for the links
	// from them; the registry terms in the other stems' definitions, kept
	// flat for the stems that have any (glossStems, one after another,
	// glossStemEnd[i] where stem i ends, glossTerms[glossEnd[i-1]:glossEnd[i]]
	// its terms).
	type ownLine struct {
		t                           uint32
		close, narrow, broad, gloss string
	}
	var own []ownLine
	// Nearly all of the list's 280,000 words are not the registry's: a
	// filter of the terms' hashes answers most of them without the
	// lookup: 12 ms for the benchmark mix's registry against 18
	// (BenchmarkRelatedTerms).
	if !unfilteredTerms {
		lookup = termFilter(terms, lookup)
	}
	var glossStems []byte
	var glossStemEnd, glossTerms, glossEnd []uint32
	words.EachRelated(func(stem, close, narrow, broad, gloss string) {
		if t, known := lookup(stem); known {
			// A registry stem is never asked about (resolve takes it
			// as it is): only its links to other stems count.
			if word[t] && !isGeneric(stem) {
				own = append(own, ownLine{t, strings.Clone(close), strings.Clone(narrow), strings.Clone(broad), strings.Clone(gloss)})
			}
			return
		}
		from := len(glossTerms)
		for gloss != "" {
			var g string
			g, gloss = nextField(gloss)
			if g == "" {
				break
			}
			if t, ok := lookup(g); ok && !isGeneric(g) && !slices.Contains(glossTerms[from:], t) {
				glossTerms = append(glossTerms, t)
			}
		}
		if len(glossTerms) > from {
			glossStems = append(glossStems, stem...)
			glossStemEnd = append(glossStemEnd, uint32(len(glossStems)))
			glossEnd = append(glossEnd, uint32(len(glossTerms)))
		}
	})
	// The links from the terms, in the terms' order.
	slices.SortFunc(own, func(a, b ownLine) int { return cmp.Compare(a.t, b.t) })
	fwd := relatedLinks{}
	for _, l := range own {
		fwd.linkLine(l.t, l.close, l.narrow, l.broad, l.gloss, lookup)
	}
	// Each stem with terms in its definitions, after its links from the
	// terms; then the stems with only the latter.
	var rt relatedBuilder
	stemStart, termStart := uint32(0), uint32(0)
	for i, end := range glossStemEnd {
		stem := string(glossStems[stemStart:end])
		cs := fwd[stem]
		delete(fwd, stem)
		rt.add(stem, cs)
		for _, t := range glossTerms[termStart:glossEnd[i]] {
			if !slices.ContainsFunc(cs, func(c cand) bool { return c.term == t }) {
				rt.cands = append(rt.cands, cand{t, glossQuality})
			}
		}
		stemStart, termStart = end, glossEnd[i]
	}
	for _, stem := range slices.Sorted(maps.Keys(fwd)) {
		rt.add(stem, fwd[stem])
	}
	return rt.table()
}

// relatedLinks is, for each word of the registry terms' related-word
// lines, the terms whose lines hold it, in the order they were linked,
// each with the best quality of its links.
type relatedLinks map[string][]cand

// linkLine links the words of term t's line (its close, narrow, broad and
// gloss words) to t, each list at its quality; words the registry has
// (lookup) and generic words are not linked.
func (f relatedLinks) linkLine(t uint32, close, narrow, broad, gloss string, lookup func(string) (uint32, bool)) {
	f.link(close, t, closeQuality, lookup)
	f.link(narrow, t, narrowQuality, lookup)
	f.link(broad, t, broadQuality, lookup)
	f.link(gloss, t, glossQuality, lookup)
}

func (f relatedLinks) link(list string, t uint32, q float32, lookup func(string) (uint32, bool)) {
	for r := range strings.FieldsSeq(list) {
		if _, known := lookup(r); known || isGeneric(r) {
			continue
		}
		cs := f[r]
		if i := slices.IndexFunc(cs, func(c cand) bool { return c.term == t }); i >= 0 {
			cs[i].quality = max(cs[i].quality, q)
			continue
		}
		f[r] = append(cs, cand{t, q})
	}
}

// unfilteredTerms makes relatedTerms look every word up without
// termFilter, for the benchmark that compares the two.
var unfilteredTerms bool

// termFilter returns lookup behind a filter of the terms' hashes
// (termHash): a word whose hash has no bit set is no term, and the bit
// costs a hash and a load where a miss in the terms' table probes it.
func termFilter(terms []string, lookup func(string) (uint32, bool)) func(string) (uint32, bool) {
	n := 1 << 12 // bits, 16 or more a term
	for n < 16*len(terms) {
		n *= 2
	}
	bits := make([]uint64, n/64)
	mask := uint32(n - 1)
	for _, t := range terms {
		h := termHash(t) & mask
		bits[h/64] |= 1 << (h % 64)
	}
	return func(w string) (uint32, bool) {
		if h := termHash(w) & mask; bits[h/64]&(1<<(h%64)) == 0 {
			return 0, false
		}
		return lookup(w)
	}
}

// commonness scales the weight of an ordinary English word the registry
// does not use, from its Zipf value: near 1 for the rarest words of the
// list, commonFloor for everyday ones.
func commonness(t *tuning, z float32) float32 {
	return min(1, max(float32(t.commonFloor), (float32(t.commonTop)-z)/float32(t.commonSpan)))
}

// minEnglishTypoLen is the shortest word corrected into an ordinary English
// word: shorter ones have too many neighbours ("rsut": rust, rut, rest).
const minEnglishTypoLen = 5

// englishTypo finds the ordinary English word a misspelled word (one not
// in frequency.txt) most likely stands for: the most common one at the
// smallest edit distance, one edit for words of 5 to 7 letters, two from
// 8, keeping the first letter below 8 as the registry's typo rule does.
// The index over the word list comes embedded (englishTypos).
func englishTypo(word string) (fixed string, dist int, ok bool) {
	if len(word) < minEnglishTypoLen || len(word) > 32 {
		return englishTypoOf(word)
	}
	h := words.Hash(word) & (englishTypoSlots - 1)
	for _, i := range [2]uint32{h, h ^ 1} {
		if e := englishTypoCache[i].Load(); e != nil && e.word == word {
			return e.fixed, e.dist, e.ok
		}
	}
	fixed, dist, ok = englishTypoOf(word)
	store2(&englishTypoCache[h], &englishTypoCache[h^1], &typoEntry{word: strings.Clone(word), fixed: fixed, dist: dist, ok: ok})
	return fixed, dist, ok
}

// englishTypoCache remembers englishTypo's answers for the misspellings
// and names queries repeat: finding one compares the word with every
// dictionary word one or two deletions away. Bounded, two-way and
// lock-free, as stemCache.
var englishTypoCache [englishTypoSlots]atomic.Pointer[typoEntry]

const englishTypoSlots = 4096

type typoEntry struct {
	word, fixed string
	dist        int
	ok          bool
}

// englishTypos is the typo index over the ordinary English words of
// minEnglishTypoLen-1 letters or more (one short, for a deleted letter),
// built at go generate time by typogen: built at the first misspelt
// question instead, it held the server's first answer about 60 ms
// (BenchmarkEnglishTyposLoad against typo's BenchmarkBuild) and took 4.7
// MB of heap (11 MB allocated to build it), which the collector then
// paced itself by. Loaded in place, its arrays are the binary's
// read-only data, paged in where a lookup looks.
//
//go:generate go run ./typogen -min 4 -out data/englishtypos.bin
//go:embed data/englishtypos.bin
var englishTypos string

// englishWords is the typo index over the ordinary English words, loaded
// on first use: a process that never meets a misspelling pays nothing.
var englishWords struct {
	once  sync.Once
	typos typo.Index
}

// englishTypoTerms marks the words of list the English typo index holds.
func englishTypoTerms(list []string) []bool {
	long := make([]bool, len(list))
	for i, w := range list {
		long[i] = len(w) >= minEnglishTypoLen-1
	}
	return long
}

// englishTypoOf is englishTypo without the cache.
func englishTypoOf(word string) (fixed string, dist int, ok bool) {
	n := len(word)
	if n < minEnglishTypoLen || utf8.RuneCountInString(word) != n {
		return "", 0, false
	}
	englishWords.once.Do(func() {
		ix, ok := typo.Load(englishTypos)
		if !ok { // not written by this typo package: build it
			list := words.ByFrequency()
			ix = typo.Build(list, englishTypoTerms(list))
		}
		englishWords.typos = ix
	})
	maxDist := 1
	if n >= twoTypoLen {
		maxDist = 2
	}
	best, bestDist := -1, maxDist+1
	englishWords.typos.NearFunc(word, maxDist, englishWord, func(t uint32, d int) {
		if !keepsFirstLetter(word, englishWord(t)) {
			return
		}
		// list is most common first, so a lower index wins a tie.
		if d < bestDist || d == bestDist && int(t) < best {
			best, bestDist = int(t), d
		}
	})
	if best < 0 {
		return "", 0, false
	}
	return englishWord(uint32(best)), bestDist, true
}

// englishWord is word t of the English word list, as the typo index
// numbers them.
func englishWord(t uint32) string { return words.FrequencyWord(int(t)) }

// Preload builds the word data's tables now, each on a goroutine of its
// own (words.Preload), so that the first index built does not wait for
// them one after the other.
func Preload() { words.Preload() }
