package matcher

import (
	_ "embed"
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

// relatedTerms maps the stems WordNet relates to the registry's terms to
// those terms. Only terms that stand as words of their own are looked up
// (not joined compounds), and generic words are left out: "guide" related
// to "lead" would tie any query to any category.
func relatedTerms(terms []string, word []bool, lookup func(string) (uint32, bool)) map[string][]cand {
	out := map[string][]cand{}
	link := func(list string, t uint32, q float32) {
		for r := range strings.FieldsSeq(list) {
			if _, known := lookup(r); known || isGeneric(r) {
				continue
			}
			cs := out[r]
			if i := slices.IndexFunc(cs, func(c cand) bool { return c.term == t }); i >= 0 {
				cs[i].quality = max(cs[i].quality, q)
				continue
			}
			out[r] = append(cs, cand{t, q})
		}
	}
	for t, st := range terms {
		if !word[t] || isGeneric(st) {
			continue
		}
		close, narrow, broad, gloss, ok := words.Related(st)
		if !ok {
			continue
		}
		link(close, uint32(t), closeQuality)
		link(narrow, uint32(t), narrowQuality)
		link(broad, uint32(t), broadQuality)
		link(gloss, uint32(t), glossQuality)
	}
	return out
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
