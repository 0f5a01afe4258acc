package words

import (
	_ "embed"
	"strings"
)

//go:embed data/generic.txt
var genericList string

//go:embed data/abbreviations.txt
var abbreviationList string

// Generic returns the generic request words of data/generic.txt ("guide",
// "best", "learn"): words that say little about a topic.
func Generic() []string {
	var out []string
	for _, words := range dataLines(genericList) {
		out = append(out, words...)
	}
	return out
}

// Abbreviations returns data/abbreviations.txt as a map from an
// abbreviation to the words it stands for ("k8s" to "kubernetes").
func Abbreviations() map[string][]string {
	m := map[string][]string{}
	for _, f := range dataLines(abbreviationList) {
		if len(f) >= 2 {
			m[f[0]] = f[1:]
		}
	}
	return m
}

// dataLines returns the words of each line of an embedded data file that
// has any, with '#' comments removed.
func dataLines(text string) [][]string {
	var out [][]string
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		if f := strings.Fields(line); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}
