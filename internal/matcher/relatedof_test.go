package matcher

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/matcher/words"
	"github.com/three-good-sources/3gs/internal/registry"
)

// relatedByLookup is what relatedOf answered before relatedTerms read
// the whole list at build: the links from the registry's terms, each
// term's line looked up (words.Related), then, for the stem asked about,
// the registry terms in its own line's definitions, looked up when asked.
func relatedByLookup(terms []string, word []bool, lookup func(string) (uint32, bool)) func(st string) []cand {
	fwd := relatedLinks{}
	for t, st := range terms {
		if !word[t] || isGeneric(st) {
			continue
		}
		close, narrow, broad, gloss, ok := words.Related(st)
		if !ok {
			continue
		}
		fwd.linkLine(uint32(t), close, narrow, broad, gloss, lookup)
	}
	return func(st string) []cand {
		cands := slices.Clone(fwd[st])
		if _, _, _, gloss, ok := words.Related(st); ok {
			for g := range strings.FieldsSeq(gloss) {
				t, ok := lookup(g)
				if !ok || isGeneric(g) {
					continue
				}
				if !slices.ContainsFunc(cands, func(c cand) bool { return c.term == t }) {
					cands = append(cands, cand{t, glossQuality})
				}
			}
		}
		return cands
	}
}

// TestRelatedTermsAsLookedUp checks relatedTerms, read from the list at
// build, against relatedByLookup for every stem a question can ask about
// (any stem of the list or linked from it that the vocabulary lacks), on
// the registries of the evaluation sets.
func TestRelatedTermsAsLookedUp(t *testing.T) {
	for _, set := range evalset.Sets("../..") {
		reg, err := registry.LoadFile(set.Registry)
		if err != nil {
			t.Fatal(err)
		}
		// Build's steps up to the terms and their lookup.
		x := &Index{slugs: make([]string, len(reg.Categories()))}
		v := merge(x.read(reg.Categories()))
		_, word := x.number(&v)
		x.termSlots = hashTerms(x.terms)
		got := relatedTerms(x.terms, word, x.term)
		want := relatedByLookup(x.terms, word, x.term)
		stems := map[string]bool{}
		words.EachRelated(func(stem, close, narrow, broad, gloss string) {
			for _, list := range []string{stem, close, narrow, broad, gloss} {
				for w := range strings.FieldsSeq(list) {
					stems[strings.Clone(w)] = true
				}
			}
		})
		asked := 0
		for st := range stems {
			if _, known := x.term(st); known {
				if got.find(st) != nil {
					t.Fatalf("%s: the registry's own stem %q is in relatedTerms", set.Name, st)
				}
				continue
			}
			asked++
			if g, w := got.find(st), want(st); !slices.Equal(g, w) {
				t.Fatalf("%s: %q: relatedTerms has %v, looked up %v", set.Name, st, g, w)
			}
		}
		for i := range got.len() {
			st := got.stem(uint32(i))
			if cs := got.find(st); !stems[st] || len(cs) == 0 {
				t.Fatalf("%s: relatedTerms has %q: %v, a stem of no line", set.Name, st, cs)
			}
		}
		t.Logf("%s: %d stems asked about, %d with related terms", set.Name, asked, got.len())
	}
}

// BenchmarkRelatedTerms measures relatedTerms on the benchmark mix's
// registry: ns/op with termFilter in front of the terms' table
// (filtered, as built) and without (unfiltered); table-B the heap the
// flat relatedTable keeps, map-B what the same stems and terms took as a
// map[string][]cand.
func BenchmarkRelatedTerms(b *testing.B) {
	reg, err := registry.LoadFile(evalset.MixV1("../..").Registry)
	if err != nil {
		b.Fatal(err)
	}
	x := &Index{slugs: make([]string, len(reg.Categories()))}
	v := merge(x.read(reg.Categories()))
	_, word := x.number(&v)
	x.termSlots = hashTerms(x.terms)
	live := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	for _, mode := range []string{"filtered", "unfiltered"} {
		b.Run(mode, func(b *testing.B) {
			unfilteredTerms = mode == "unfiltered"
			defer func() { unfilteredTerms = false }()
			var rt relatedTable
			for b.Loop() {
				rt = relatedTerms(x.terms, word, x.term)
			}
			b.StopTimer()
			rt = relatedTable{}
			before := live()
			rt = relatedTerms(x.terms, word, x.term)
			table := live() - before
			m := map[string][]cand{}
			for i := range rt.len() {
				st := rt.stem(uint32(i))
				m[strings.Clone(st)] = slices.Clone(rt.find(st))
			}
			rt = relatedTable{}
			asMap := live() - before
			b.ReportMetric(float64(table), "table-B")
			b.ReportMetric(float64(asMap), "map-B")
			runtime.KeepAlive(m)
		})
	}
}
