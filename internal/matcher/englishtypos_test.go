package matcher

import (
	"maps"
	"testing"

	"github.com/three-good-sources/3gs/internal/matcher/typo"
	"github.com/three-good-sources/3gs/internal/matcher/words"
)

// TestEnglishTyposEmbedded: the embedded English typo index is, byte for
// byte, the one this tree builds from the word list with the matcher's
// rule (englishTypoTerms), and it loads. A change to the word list, the
// rule or the typo index's layout fails here until go generate is run.
func TestEnglishTyposEmbedded(t *testing.T) {
	list := words.ByFrequency()
	ix := typo.Build(list, englishTypoTerms(list))
	if want := ix.AppendBinary(nil); string(want) != englishTypos {
		t.Fatalf("data/englishtypos.bin (%d bytes) is not the index built from the word list (%d bytes): run go generate ./internal/matcher", len(englishTypos), len(want))
	}
	if _, ok := typo.Load(englishTypos); !ok {
		t.Fatal("data/englishtypos.bin does not load")
	}
}

// TestEnglishTypoLoaded: the loaded index (8-bit keys) finds the words
// the built one (16-bit) finds, each at its distance, so the correction,
// the nearest and most common of them, is the same: checked on common
// misspellings and on every word of the list's first 3,000 with two
// letters swapped and with one deleted.
func TestEnglishTypoLoaded(t *testing.T) {
	list := words.ByFrequency()
	built := typo.Build(list, englishTypoTerms(list))
	loaded, ok := typo.Load(englishTypos)
	if !ok {
		t.Fatal("data/englishtypos.bin does not load")
	}
	ws := []string{"recieve", "langauge", "ownrship", "beginer", "cofee", "programing", "qzxwv"}
	for _, w := range list[:3000] {
		if len(w) >= minEnglishTypoLen {
			ws = append(ws, w[:1]+w[2:3]+w[1:2]+w[3:], w[:2]+w[3:])
		}
	}
	found := func(ix *typo.Index, w string) map[uint32]int {
		m := map[uint32]int{}
		ix.Near(w, 2, list, func(t uint32, d int) { m[t] = d })
		return m
	}
	for _, w := range ws {
		if a, b := found(&built, w), found(&loaded, w); !maps.Equal(a, b) {
			t.Fatalf("%q: built index finds %v, loaded %v", w, a, b)
		}
	}
	if fixed, _, ok := englishTypo("recieve"); !ok || fixed != "receive" {
		t.Errorf("englishTypo(recieve) = %q, %v; want receive", fixed, ok)
	}
}

// BenchmarkEnglishTyposLoad is what the first misspelt question waits
// for now: loading the embedded index in place. typo's BenchmarkBuild is
// what it waited for before, building it (about 40 ms on 2 cores).
func BenchmarkEnglishTyposLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := typo.Load(englishTypos); !ok {
			b.Fatal("does not load")
		}
	}
}

// BenchmarkEnglishTypo corrects misspelt words with the English typo
// index, bypassing the cache: what a misspelling new to the process
// costs.
func BenchmarkEnglishTypo(b *testing.B) {
	ws := []string{"recieve", "langauge", "ownrship", "beginer", "cofee", "programing", "qzxwv", "expresso", "gardning", "photografy"}
	englishTypoOf(ws[0])
	b.ReportAllocs()
	for b.Loop() {
		for _, w := range ws {
			englishTypoOf(w)
		}
	}
}
