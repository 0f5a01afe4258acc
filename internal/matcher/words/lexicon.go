// Package words is the English the matcher knows beyond a registry's own
// words, compiled from public word lists by lexgen (data/, with their
// licences) or kept by hand: how common a word is (data/frequency.txt),
// which words are related (data/related.txt), what direction a word has
// in meaning (data/vectors.bin), the generic request words
// (data/generic.txt) and the abbreviations (data/abbreviations.txt). A
// registry is loaded at run time, so these cover English as a whole; the
// matcher picks out what its vocabulary needs. The package only reads its
// data, and imports nothing of the project but internal/execfile.
package words

import (
	_ "embed"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

//go:generate go run ../lexgen -src ../lexgen/node_modules -out data

//go:embed data/frequency.txt
var frequencyList string

//go:embed data/related.txt
var relatedList string

// Zipf is how common a lowercase English word is, as a Zipf value (3 is
// one use per million words, 6 one per thousand); ok is false for words
// too rare for the list: names, jargon and misspellings.
func Zipf(word string) (z float32, ok bool) {
	lexicon.once.Do(lexicon.load)
	id, ok := lexicon.freq.find(word)
	if !ok {
		return 0, false
	}
	return lexicon.zipf[id], true
}

// Related is the related-word line of a stem: close words, narrower
// words, broader words and the words of its definitions and topics, each
// a space-separated list of stems.
//
// It indexes the whole list in place on first use, which leaves its 1.9
// MB resident: the matcher reads the list once with EachRelated instead.
func Related(stem string) (close, narrow, broad, gloss string, ok bool) {
	related.once.Do(loadRelated)
	id, ok := related.rel.find(stem)
	if !ok {
		return "", "", "", "", false
	}
	_, close, narrow, broad, gloss = splitRelated(related.rel.line(id))
	return close, narrow, broad, gloss, true
}

// splitRelated splits a line of related.txt (without its newline) into
// its stem and its four lists.
func splitRelated(line string) (stem, close, narrow, broad, gloss string) {
	stem, line, _ = strings.Cut(line, "|")
	close, rest, _ := strings.Cut(line, "|")
	narrow, rest, _ = strings.Cut(rest, "|")
	broad, gloss, _ = strings.Cut(rest, "|")
	return stem, close, narrow, broad, gloss
}

// Preload builds the lexicon's and the word vectors' tables now, each on
// a goroutine of its own, instead of one after the other when the first
// index is built: a server calls it before it reads its registry, so on
// a machine with more than one core they are ready sooner (the first
// answer comes that much earlier). Whoever needs a table first waits for
// it, as on first use.
func Preload() {
	go lexicon.once.Do(lexicon.load)
	go vectors.once.Do(loadVectors)
}

// lexicon is indexed on first use: a process that never builds an index
// (a CLI command) pays nothing. The words and lines stay in the embedded
// strings; what is allocated is the offset of each line, a float per
// word and an open-addressing table of line numbers, mapped apart from
// the collector's heap (table). None of it holds a pointer; as string
// headers the lines were 680 KB of the heap the collector scanned and
// paced itself by, about an eighth of a small registry's server.
var lexicon lexiconTables

type lexiconTables struct {
	once sync.Once
	freq lineTable // the words of frequency.txt, most common first
	zipf []float32 // zipf[i] is the Zipf value of freq.line(i)
}

// related indexes the lines of related.txt, keyed by their stem, for
// Related, on its first use: apart from the lexicon, so that a server,
// which reads the list with EachRelated, never reads it in place.
var related struct {
	once sync.Once
	rel  lineTable
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
	t.slots = table[uint32](tableSize(len(t.starts)))
	mask := uint32(len(t.slots) - 1)
	for i := range t.starts {
		h := Hash(t.key(i))
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
	for h := Hash(key); ; h++ {
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
	l.freq = lineTable{text: frequencyList, starts: table[uint32](n)[:0], delim: ' '}
	l.zipf = table[float32](n)[:0]
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
}

// loadRelated indexes related.txt's lines in place (related.rel).
func loadRelated() {
	rel := lineTable{text: relatedList, starts: table[uint32](strings.Count(relatedList, "\n"))[:0], delim: '|'}
	off := 0
	for line := range strings.Lines(relatedList) {
		if !strings.HasPrefix(line, "#") {
			rel.starts = append(rel.starts, uint32(off))
		}
		off += len(line)
	}
	rel.index()
	related.rel = rel
}

// FrequencyWord is word i of data/frequency.txt (ByFrequency()[i]), read
// in place: nothing is allocated.
func FrequencyWord(i int) string {
	lexicon.once.Do(lexicon.load)
	return lexicon.freq.key(i)
}

// ByFrequency returns the words of data/frequency.txt, most common first.
func ByFrequency() []string {
	lexicon.once.Do(lexicon.load)
	out := make([]string, len(lexicon.freq.starts))
	for i := range out {
		out[i] = lexicon.freq.key(i)
	}
	return out
}
