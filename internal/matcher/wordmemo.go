package matcher

// The word memo: what resolve reports for a query word, kept per index.
//
// Resolving a word asks the stem cache, the vocabulary (stem, then as
// written), the abbreviations, the English frequency list, and for a word
// the vocabulary lacks the typo index, prefixes, splits, the English typo
// index and the related words, before newWord looks its frequency,
// genericity and word vectors up: several hash probes for a known word,
// dozens for a misspelt one. Questions repeat their words ("how",
// "learn", "server"), so the whole answer is kept for the words met
// lately, and a word met again costs one probe (BenchmarkParse). Bounded and
// lock-free as stemCache: wordMemoSlots entries of at most maxMemoEntry
// bytes (BenchmarkParse reports them in bytes per word), each immutable
// once stored and holding its own copies of the words, never the query's.
// The index never changes after Build, so an entry never goes stale.

import (
	"strings"
	"sync/atomic"
	"unsafe"
)

// wordMemoSlots bounds the memo. It is four-way set associative: a word
// may sit in any of the four slots of its set; the first three keep the
// words that took them, and a newer word replaces the fourth (a two-way
// memo turned a tenth of the mix's words over on every question).
const (
	wordMemoSlots = 2048
	wordMemoWays  = 4
)

// maxMemoWord is the longest word kept: longer ones are resolved each
// time (they are rare, and an entry stays small). Nonsense that long
// ("zzzz…") is the costliest to resolve, so it is kept up to this length.
const maxMemoWord = 64

// maxMemoEntry bounds the bytes an entry may take (memoBytes), so the
// memo never holds more than wordMemoSlots times this, whatever the
// registry and the questions: a word that meets many terms (a typo of a
// word with many neighbours in a huge registry, a word with many related
// terms) is resolved each time instead. The mix's words take 180 bytes
// on average, and no word of 5,000 questions on a 100,000-category
// registry met more than 18 terms.
const maxMemoEntry = 512

type wordMemo [wordMemoSlots]atomic.Pointer[memoEntry]

// memoEntry is what resolve reported for raw: the query words, in order,
// before put records them. Most words resolve to one query word with at
// most two terms, which the entry holds itself (one allocation but for
// its text).
type memoEntry struct {
	raw   string
	words []qword
	one   [1]qword
	cands [2]cand
}

// resolveWord is what resolve reports for raw (a word of a query, not a
// stop word), from x.wordMemo when memo is set and the word was met
// lately. The result is read before the next call, never changed.
func (x *Index) resolveWord(raw string, p *parsed, memo bool) []qword {
	memo = memo && len(raw) <= maxMemoWord
	var set uint32
	if memo {
		set = termHash(raw) & (wordMemoSlots - 1) &^ (wordMemoWays - 1)
		for i := set; i < set+wordMemoWays; i++ {
			e := x.wordMemo[i].Load()
			if e == nil {
				break // slots fill in order
			}
			if e.raw == raw {
				return e.words
			}
		}
	}
	p.resolved, p.resolvedCands = p.resolved[:0], p.resolvedCands[:0]
	x.resolve(raw, 0, p, wordMod{})
	if memo && memoBytes(raw, p.resolved) <= maxMemoEntry {
		x.wordMemo.store(set, newMemoEntry(raw, p.resolved))
	}
	return p.resolved
}

// store puts e in the first free slot of the set that starts at set, or
// in its last.
func (m *wordMemo) store(set uint32, e *memoEntry) {
	for i := set; i < set+wordMemoWays-1; i++ {
		if m[i].CompareAndSwap(nil, e) {
			return
		}
	}
	m[set+wordMemoWays-1].Store(e)
}

// newMemoEntry copies what resolve reported for raw into storage of its
// own: the words, their cands, and their strings (in one string, where
// a word's raw or stem is not raw itself or a prefix of it).
func newMemoEntry(raw string, ws []qword) *memoEntry {
	e := &memoEntry{}
	text := raw
	if extra := memoText(raw, ws); extra > 0 {
		var b strings.Builder
		b.Grow(len(raw) + extra)
		b.WriteString(raw)
		for _, w := range ws {
			for _, s := range [2]string{w.raw, w.stem} {
				if !strings.HasPrefix(raw, s) {
					b.WriteString(s)
				}
			}
		}
		text = b.String()
	} else {
		text = strings.Clone(raw)
	}
	e.raw = text[:len(raw)]
	at := len(raw)
	place := func(s string) string {
		if strings.HasPrefix(raw, s) {
			return e.raw[:len(s)]
		}
		at += len(s)
		return text[at-len(s) : at]
	}
	nc := 0
	for _, w := range ws {
		nc += len(w.cands)
	}
	cands := e.cands[:0:0]
	if nc > len(e.cands) {
		cands = make([]cand, 0, nc)
	} else if nc > 0 {
		cands = e.cands[:0:nc]
	}
	e.words = e.one[:0]
	if len(ws) > 1 {
		e.words = make([]qword, 0, len(ws))
	}
	for _, w := range ws {
		w.raw = place(w.raw)
		w.stem = place(w.stem)
		if len(w.cands) > 0 {
			start := len(cands)
			cands = append(cands, w.cands...)
			w.cands = cands[start:len(cands):len(cands)]
		} else {
			w.cands = nil
		}
		e.words = append(e.words, w)
	}
	return e
}

// memoBytes is about what newMemoEntry(raw, ws) takes: the entry, the
// words and terms it cannot hold itself, and its text.
func memoBytes(raw string, ws []qword) int {
	n := int(unsafe.Sizeof(memoEntry{})) + len(raw) + memoText(raw, ws)
	if len(ws) > 1 {
		n += len(ws) * int(unsafe.Sizeof(qword{}))
	}
	nc := 0
	for _, w := range ws {
		nc += len(w.cands)
	}
	if nc > len(memoEntry{}.cands) {
		n += nc * int(unsafe.Sizeof(cand{}))
	}
	return n
}

// memoText is the bytes an entry's text needs beside raw: the words'
// raw forms and stems that are not raw or a prefix of it.
func memoText(raw string, ws []qword) int {
	n := 0
	for _, w := range ws {
		for _, s := range [2]string{w.raw, w.stem} {
			if !strings.HasPrefix(raw, s) {
				n += len(s)
			}
		}
	}
	return n
}
