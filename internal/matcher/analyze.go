package matcher

import (
	"net/url"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/three-good-sources/3gs/internal/matcher/words"
	"github.com/three-good-sources/3gs/internal/strictjson"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// stem reduces a lowercase word to its Snowball (Porter2) English stem, so
// "hardening", "harden" and "hardened" meet. Words with digits ("esp32",
// "rfc9110") are names, not English, and are kept as written.
func stem(raw string) string {
	for _, r := range raw {
		if unicode.IsDigit(r) || r > unicode.MaxASCII {
			return raw
		}
	}
	return english.Stem(raw, true)
}

// stemCache holds the stems of query words stemmed before: the Snowball
// stemmer allocates twice per word and was a fifth of a short query's
// time, and questions reuse their words. Two-way set-associative and
// bounded (stemCacheSlots words; a word may sit in either slot of its
// pair, and a new one replaces the pair's second),
// with atomic loads and stores, so concurrent queries share it without
// locks; an entry keeps its own copy of the word, never the query's.
var stemCache [stemCacheSlots]atomic.Pointer[stemEntry]

const stemCacheSlots = 16384

type stemEntry struct{ raw, stem string }

// stemQuery is stem, remembered for the words queries use.
func stemQuery(raw string) string {
	if len(raw) > 32 {
		return stem(raw)
	}
	h := words.Hash(raw) & (stemCacheSlots - 1)
	if e := stemCache[h].Load(); e != nil && e.raw == raw {
		return e.stem
	}
	if e := stemCache[h^1].Load(); e != nil && e.raw == raw {
		return e.stem
	}
	st := stem(raw)
	e := &stemEntry{raw: strings.Clone(raw), stem: st}
	if st == raw {
		e.stem = e.raw // no second copy of a word the stemmer keeps
	}
	store2(&stemCache[h], &stemCache[h^1], e)
	return e.stem
}

// store2 puts e in the first of a cache's pair of slots when it is free,
// else in the second: a word that keeps its slot stays, the second turns
// over.
func store2[T any](first, second *atomic.Pointer[T], e *T) {
	if first.CompareAndSwap(nil, e) {
		return
	}
	second.Store(e)
}

// scan walks lower (already lowercase) the way textnorm.Tokens splits it:
// words are runs of letters and digits, and stop words are skipped. It
// calls word for each remaining word in order, and compound with the joined
// form of every whitespace-separated chunk that punctuation splits into
// several words ("self-hosted" → "selfhosted", "mail-in-a-box" →
// "mailinabox"): names are written both ways, and a query that joins them
// must still meet the split form. Raw words are substrings of lower, so
// scanning allocates only for compounds and words with capitals.
//
// With fold, lower may also hold ASCII capitals (and only those: text with
// other capitals must be lowercased first): a word with capitals is
// lowercased through *fold into a string of its own, and compounds are
// lowercased too, so the words are those of strings.ToLower(lower) without
// a lowercase copy of all of it. (An unsafe view of *fold instead of the
// word's string saved 0.2% of the bytes of building the dev registry's
// index and nothing per query, so it went.)
func scan(lower string, fold *[]byte, word func(raw string), compound func(joined string)) {
	chunkStart, parts, start := -1, 0, -1
	capitals := false // the current word has ASCII capitals
	var joined []byte
	endChunk := func(end int) {
		if parts > 1 && compound != nil {
			joined = joined[:0]
			for _, r := range lower[chunkStart:end] {
				if 'A' <= r && r <= 'Z' && fold != nil {
					r += 'a' - 'A'
				}
				if !textnorm.IsSeparator(r) {
					joined = utf8.AppendRune(joined, r)
				}
			}
			if len(joined) >= minCompoundLen {
				compound(string(joined))
			}
		}
		chunkStart, parts = -1, 0
	}
	endWord := func(end int) {
		w := lower[start:end]
		if capitals && fold != nil {
			*fold = append((*fold)[:0], w...)
			for k, c := range *fold {
				if 'A' <= c && c <= 'Z' {
					(*fold)[k] = c + 'a' - 'A'
				}
			}
			w = string(*fold)
		}
		capitals = false
		parts++
		if !textnorm.IsStopWord(w) {
			word(w)
		}
		start = -1
	}
	for i := 0; i < len(lower); {
		// ASCII is decided by table; other runes by package unicode.
		c, size := lower[i], 1
		var space, sep bool
		if c < utf8.RuneSelf {
			space, sep = asciiClass[c] == classSpace, asciiClass[c] == classSep
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(lower[i:])
			space, sep = unicode.IsSpace(r), textnorm.IsSeparator(r)
		}
		switch {
		case space:
			if start >= 0 {
				endWord(i)
			}
			if chunkStart >= 0 {
				endChunk(i)
			}
		case sep:
			if start >= 0 {
				endWord(i)
			}
			if chunkStart < 0 {
				chunkStart = i
			}
		default:
			if chunkStart < 0 {
				chunkStart = i
			}
			if start < 0 {
				start = i
			}
			capitals = capitals || 'A' <= c && c <= 'Z'
		}
		i += size
	}
	if start >= 0 {
		endWord(len(lower))
	}
	if chunkStart >= 0 {
		endChunk(len(lower))
	}
}

const (
	classWord = iota
	classSep
	classSpace
)

// asciiClass sorts ASCII bytes the way unicode.IsSpace and
// textnorm.IsSeparator do, without a call per byte.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch r := rune(c); {
		case unicode.IsSpace(r):
			t[c] = classSpace
		case textnorm.IsSeparator(r):
			t[c] = classSep
		}
	}
	return t
}()

// minCompoundLen keeps joined forms such as "e-g" ("eg") out of the index:
// short joins are abbreviations that collide with unrelated words.
const minCompoundLen = 5

// hostText turns a source URL's host into text worth matching: the labels
// without "www" and without the top-level domain, so
// "https://www.home-assistant.io/docs/" gives "home-assistant".
func hostText(raw string) string {
	if host, ok := strictjson.PlainURL(raw); ok {
		// The host url.Parse would find, lowercase: the same labels,
		// cut without a slice of them.
		if i := strings.LastIndexByte(host, '.'); i >= 0 {
			host = host[:i]
		}
		if host == "www" {
			return ""
		}
		host = strings.TrimPrefix(host, "www.")
		if strings.IndexByte(host, '.') < 0 {
			return host
		}
		return strings.ReplaceAll(host, ".", " ")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	labels := strings.Split(strings.ToLower(u.Hostname()), ".")
	if len(labels) > 1 {
		labels = labels[:len(labels)-1]
	}
	if len(labels) > 0 && labels[0] == "www" {
		labels = labels[1:]
	}
	return strings.Join(labels, " ")
}

func isNumber(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

// isGeneric reports whether a stem is a generic request word
// (data/generic.txt) or a bare number: words that say little about a topic.
func isGeneric(stem string) bool { return genericStems[stem] || isNumber(stem) }

// genericStems holds the stems of data/generic.txt.
var genericStems = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range words.Generic() {
		m[stem(w)] = true
	}
	return m
}()

// abbreviations maps an abbreviation to the words it stands for
// (data/abbreviations.txt).
var abbreviations = words.Abbreviations()

// Stem is the form the matcher compares words in: word lower-cased and
// reduced to its stem, so callers outside the matcher (list_categories'
// tags) meet words as the matcher does ("containers" and "container").
func Stem(word string) string { return stemQuery(strings.ToLower(word)) }
