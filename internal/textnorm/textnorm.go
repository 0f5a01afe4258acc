// Package textnorm turns free text into the lowercase word tokens that the
// matcher compares. The registry loader uses the same function to refuse
// query patterns that normalize to nothing, so a pattern the matcher could
// never use cannot enter the registry. It also judges the characters that
// hide or reorder text (Hidden), and makes text from elsewhere safe to
// keep (Visible) or to print to a terminal (Terminal).
package textnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens lowercases s, splits it at every character that is not a letter or
// digit (which strips punctuation), and drops English stop words.
func Tokens(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), IsSeparator) {
		if !IsStopWord(w) {
			out = append(out, w)
		}
	}
	return out
}

// HasTokens reports whether Tokens(s) is not empty, without building it:
// whether s holds a word that is not a stop word. It lowercases rune by
// rune, as strings.ToLower does, and splits where Tokens does.
func HasTokens(s string) bool {
	var word [maxStopWord + utf8.UTFMax]byte
	n := 0 // bytes of the current word in word; past maxStopWord, no stop word
	for _, r := range s {
		r = unicode.ToLower(r)
		if IsSeparator(r) {
			if n > 0 && !IsStopWord(string(word[:n])) {
				return true
			}
			n = 0
			continue
		}
		if n <= maxStopWord {
			n += utf8.EncodeRune(word[n:], r)
		}
	}
	return n > 0 && !IsStopWord(string(word[:n]))
}

// maxStopWord is the length in bytes of the longest stop word
// ("yourselves", "themselves"; TestHasTokens checks it).
const maxStopWord = 10

// Normalize is Tokens joined by single spaces.
func Normalize(s string) string { return strings.Join(Tokens(s), " ") }

// IsSeparator reports whether r splits words: every character that is not
// a letter or a digit.
func IsSeparator(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// IsStopWord reports whether w (lowercase) is an English stop word, which
// Tokens drops.
func IsStopWord(w string) bool {
	if len(w) == 0 || len(w) > maxStopWord {
		return false
	}
	for _, s := range stopByShape[len(w)][w[0]&(stopFirstSlots-1)] {
		if s == w {
			return true
		}
	}
	return false
}

// stopByShape holds the stop words by length and first byte (its low
// bits), so that IsStopWord compares a word with the few of its shape
// instead of hashing it: the matcher asks about every word of every
// category when it builds an index, and a map lookup was a tenth of that.
var stopByShape = func() (t [maxStopWord + 1][stopFirstSlots][]string) {
	for w := range stopWords {
		t[len(w)][w[0]&(stopFirstSlots-1)] = append(t[len(w)][w[0]&(stopFirstSlots-1)], w)
	}
	return t
}()

const stopFirstSlots = 32

// stopWords is NLTK's English stop-word list. Contractions appear split at
// the apostrophe ("don", "t") because Tokens splits there too.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		i me my myself we our ours ourselves you your yours yourself
		yourselves he him his himself she her hers herself it its itself they
		them their theirs themselves what which who whom this that these those
		am is are was were be been being have has had having do does did doing
		a an the and but if or because as until while of at by for with about
		against between into through during before after above below to from
		up down in out on off over under again further then once here there
		when where why how all any both each few more most other some such no
		nor not only own same so than too very s t can will just don should now
		d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma
		mightn mustn needn shan shouldn wasn weren won wouldn`) {
		m[w] = true
	}
	return m
}()
