package matcher

import (
	_ "embed"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/three-good-sources/3gs/internal/matcher/typo"
)

//go:generate go run ./lexgen -src lexgen/node_modules -out data

// The general English knowledge the matcher carries, compiled from public
// word lists by lexgen: how common a word is, and which words are related.
// A registry is loaded at run time, so these cover English as a whole;
// Build picks out what its vocabulary needs.

//go:embed data/frequency.txt
var frequencyList string

//go:embed data/related.txt
var relatedList string

// zipfOf is how common a lowercase English word is, as a Zipf value (3 is
// one use per million words, 6 one per thousand); ok is false for words
// too rare for the list: names, jargon and misspellings.
func zipfOf(word string) (z float32, ok bool) {
	lexicon.once.Do(lexicon.load)
	id, ok := lexicon.freq.find(word)
	if !ok {
		return 0, false
	}
	return lexicon.zipf[id], true
}

// relatedOf is the related-word line of a stem: close words, narrower
// words, broader words and the words of its definitions and topics, each
// a space-separated list of stems.
func relatedOf(stem string) (close, narrow, broad, gloss string, ok bool) {
	lexicon.once.Do(lexicon.load)
	id, ok := lexicon.rel.find(stem)
	if !ok {
		return "", "", "", "", false
	}
	_, line, _ := strings.Cut(lexicon.rel.line(id), "|")
	close, rest, _ := strings.Cut(line, "|")
	narrow, rest, _ = strings.Cut(rest, "|")
	broad, gloss, _ = strings.Cut(rest, "|")
	return close, narrow, broad, gloss, true
}

// Preload builds the lexicon's and the word vectors' tables now, each on
// a goroutine of its own, instead of one after the other when the first
// index is built: a server calls it before it reads its registry, so on
// a machine with more than one core they are ready sooner (the first
// answer comes that much earlier). Whoever needs a table first waits for
// it, as on first use.
func Preload() {
	go lexicon.once.Do(lexicon.load)
	go wordVectors.once.Do(loadVectors)
}

// lexicon is indexed on first use: a process that never builds an index
// (a CLI command) pays nothing. The words and lines stay in the embedded
// strings; what is allocated is the offset of each line, a float per
// word and two open-addressing tables of line numbers. None of it holds
// a pointer, so the collector never scans it; as string headers the
// lines were 680 KB of the heap the collector scanned and paced itself
// by, about an eighth of a small registry's server.
var lexicon lexiconTables

type lexiconTables struct {
	once sync.Once
	freq lineTable // the words of frequency.txt, most common first
	zipf []float32 // zipf[i] is the Zipf value of freq.line(i)
	rel  lineTable // the lines of related.txt, keyed by their stem

	typoOnce  sync.Once
	typos     typo.Index
	typoWords []string // freq's words, made for the typo index
}

// lineTable finds lines by key without a map: a line is the text from
// one of starts to the next newline (or the end), its key the part before
// the first delim, and slots an open-addressing table over the keys'
// hashes holding line number + 1 (0 is a free slot).
type lineTable struct {
	text   string
	starts []uint32
	delim  byte
	slots  []uint32
}

// line is line i, without its newline.
func (t *lineTable) line(i int) string {
	l := t.text[t.starts[i]:]
	if end := strings.IndexByte(l, '\n'); end >= 0 {
		l = l[:end]
	}
	return l
}

// key is line i's key.
func (t *lineTable) key(i int) string {
	l := t.line(i)
	if end := strings.IndexByte(l, t.delim); end >= 0 {
		l = l[:end]
	}
	return l
}

func (t *lineTable) index() {
	t.slots = make([]uint32, tableSize(len(t.starts)))
	mask := uint32(len(t.slots) - 1)
	for i := range t.starts {
		h := hashBytes(t.key(i))
		for t.slots[h&mask] != 0 {
			h++
		}
		t.slots[h&mask] = uint32(i) + 1
	}
}

func (t *lineTable) find(key string) (int, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := uint32(len(t.slots) - 1)
	for h := hashBytes(key); ; h++ {
		id := t.slots[h&mask]
		if id == 0 {
			return 0, false
		}
		if t.hasKey(int(id-1), key) {
			return int(id - 1), true
		}
	}
}

// hasKey reports whether line i's key is key, without finding where the
// key ends first: the line must begin with key, followed by the
// delimiter, a newline or the end of the text.
func (t *lineTable) hasKey(i int, key string) bool {
	s := int(t.starts[i])
	end := s + len(key)
	if end > len(t.text) || t.text[s:end] != key {
		return false
	}
	if end < len(t.text) && t.text[end] != t.delim && t.text[end] != '\n' {
		return false
	}
	return strings.IndexByte(key, t.delim) < 0 && strings.IndexByte(key, '\n') < 0
}

func (l *lexiconTables) load() {
	n := strings.Count(frequencyList, "\n")
	l.freq = lineTable{text: frequencyList, starts: make([]uint32, 0, n), delim: ' '}
	l.zipf = make([]float32, 0, n)
	off := 0
	for line := range strings.Lines(frequencyList) {
		start := off
		off += len(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		trimmed := strings.TrimSpace(line)
		_, z, _ := strings.Cut(trimmed, " ")
		if v, err := strconv.ParseFloat(z, 32); err == nil {
			// The word is what precedes the first space of the trimmed
			// line, which starts where the leading space ends.
			lead := len(line) - len(strings.TrimLeftFunc(line, unicode.IsSpace))
			l.freq.starts = append(l.freq.starts, uint32(start+lead))
			l.zipf = append(l.zipf, float32(v))
		}
	}
	l.freq.index()
	l.rel = lineTable{text: relatedList, starts: make([]uint32, 0, strings.Count(relatedList, "\n")), delim: '|'}
	off = 0
	for line := range strings.Lines(relatedList) {
		if !strings.HasPrefix(line, "#") {
			l.rel.starts = append(l.rel.starts, uint32(off))
		}
		off += len(line)
	}
	l.rel.index()
}

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
		close, narrow, broad, gloss, ok := relatedOf(st)
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
// The index over the word list is built on first use.
func englishTypo(word string) (fixed string, dist int, ok bool) {
	if len(word) < minEnglishTypoLen || len(word) > 32 {
		return englishTypoOf(word)
	}
	h := hashBytes(word) & (englishTypoSlots - 1)
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

// englishTypoOf is englishTypo without the cache.
func englishTypoOf(word string) (fixed string, dist int, ok bool) {
	n := len(word)
	if n < minEnglishTypoLen || utf8.RuneCountInString(word) != n {
		return "", 0, false
	}
	lexicon.once.Do(lexicon.load)
	lexicon.typoOnce.Do(func() {
		words := make([]string, len(lexicon.freq.starts))
		for i := range words {
			words[i] = lexicon.freq.key(i)
		}
		lexicon.typoWords = words
		long := make([]bool, len(words))
		for i, w := range words {
			long[i] = len(w) >= minEnglishTypoLen-1
		}
		lexicon.typos = typo.Build(words, long)
	})
	words := lexicon.typoWords
	maxDist := 1
	if n >= twoTypoLen {
		maxDist = 2
	}
	best, bestDist := -1, maxDist+1
	lexicon.typos.Near(word, maxDist, words, func(t uint32, d int) {
		if !keepsFirstLetter(word, words[t]) {
			return
		}
		// words are most common first, so a lower index wins a tie.
		if d < bestDist || d == bestDist && int(t) < best {
			best, bestDist = int(t), d
		}
	})
	if best < 0 {
		return "", 0, false
	}
	return words[best], bestDist, true
}
