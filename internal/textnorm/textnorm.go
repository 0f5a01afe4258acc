// Package textnorm turns free text into the lowercase word tokens that the
// matcher compares. The registry loader uses the same function to refuse
// query patterns that normalize to nothing, so a pattern the matcher could
// never use cannot enter the registry.
package textnorm

import (
	"strings"
	"unicode"
)

// Tokens lowercases s, splits it at every character that is not a letter or
// digit, and drops stop words.
func Tokens(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), isSeparator) {
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

func isSeparator(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// IsStopWord reports whether w (lowercase) carries no topic on its own.
func IsStopWord(w string) bool { return stopWords[w] }

// stopWords are function words and the filler of how agents phrase requests
// ("how do I", "a good guide to"); they say nothing about the topic.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a about above after again all am an and any are as at be because been
		before being below between both but by can could did do does doing
		down during each few for from further had has have having he her here
		hers him his how i if in into is it its itself just me more most my
		myself no nor not now of off on once only or other our ours out over
		own same she should so some such than that the their theirs them then
		there these they this those through to too under until up very was we
		were what when where which while who whom why will with would you your
		yours yourself
		best good great guide guides help please recommend recommended show
		tell want need find learn looking source sources resource resources
		way ways get started start`) {
		m[w] = true
	}
	return m
}()
