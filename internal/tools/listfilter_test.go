package tools

import (
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/registry"
)

// filterByWords is list_categories' filter as it is defined: the
// category's text lower-cased and split into words, and every filter word
// the start of one of them. matchesFilter reads the text in place and must
// agree with it.
func filterByWords(words []string, c registry.Category) bool {
	have := filterWords(c.Slug + " " + c.Name + " " + c.Description)
	for _, w := range words {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.HasPrefix(h, w) }) {
			return false
		}
	}
	return true
}

func filterCase(slug, name, desc string) registry.Category {
	return registry.Category{Slug: slug, Category: &gen.Category{Name: name, Description: desc}}
}

func TestMatchesFilter(t *testing.T) {
	c := filterCase("rust-learning", "Learning Rust", "The Rust book, Rustlings and ÉCOLE notes; déjà-vu: ΣΊΣΥΦΟΣ 42nd.")
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		{"", true},
		{"rust", true},
		{"RUSTL", true}, // the start of "rustlings"
		{"ust", false},  // inside a word, not its start
		{"learn rust", true},
		{"learn python", false},
		{"école", true},   // lowered rune by rune
		{"ecole", false},  // no folding of accents
		{"déjà vu", true}, // the hyphen separates
		{"ΣΊΣΥ", true},    // upper case lowered as the text is
		{"42", true},
		{"42nd", true},
		{"book,", true},   // the filter's punctuation is a separator too
		{"notesx", false}, // longer than the word
	} {
		words := filterWords(tc.filter)
		if got := matchesFilter(words, c); got != tc.want || got != filterByWords(words, c) {
			t.Errorf("filter %q: got %v, want %v (by words: %v)", tc.filter, got, tc.want, filterByWords(words, c))
		}
	}
}

func FuzzMatchesFilter(f *testing.F) {
	f.Add("rust", "Learning Rust", "The Rust book and Rustlings.")
	f.Add("éc ΣΊ", "ÉCOLE", "ΣΊΣΥΦΟΣ déjà-vu İstanbul")
	f.Add("\xff a", "a\xffb", "")
	f.Fuzz(func(t *testing.T, filter, name, desc string) {
		c := filterCase("some-slug", name, desc)
		words := filterWords(filter)
		if got, want := matchesFilter(words, c), filterByWords(words, c); got != want {
			t.Fatalf("filter %q on %q / %q: got %v, by words %v", filter, name, desc, got, want)
		}
	})
}

// BenchmarkListCategoriesFilter is a filter that matches nothing, on
// 10,000 categories of realistic text: every category is read.
func BenchmarkListCategoriesFilter(b *testing.B) {
	cats := make([]registry.Category, 10000)
	for i := range cats {
		cats[i] = filterCase("topic-"+strings.Repeat("x", i%7), "Some Topic Name", "A description of the kind curators write: what it covers, for whom, and the tools it names.")
	}
	words := filterWords("nothing-has-this-word")
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range cats {
			if matchesFilter(words, c) {
				b.Fatal("matched")
			}
		}
	}
}
