package matcher

import (
	"fmt"
	"slices"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher/words"
	"github.com/three-good-sources/3gs/internal/registry"
)

// A long list keeps the candidates an answer reads and the categories a
// query word meets, in their order, and goes on by closeness in meaning
// of the whole question (byMeaning): the category a paraphrase that
// shares no word with it is about comes next, in score order; a list of
// candidatePool is left as it is.
func TestLongListByMeaning(t *testing.T) {
	x := Build(pastimes())
	const q = "my fingertips are sore from the strings"
	// The list rank made: five candidates, then a category a query word
	// meets, then one word vectors alone reached.
	var out []hit
	for i, slug := range []string{"tax", "sourdough", "knots", "manicure", "puppetry", "first-aid", "ironing"} {
		c := uint32(slices.Index(x.slugs, slug))
		h := hit{Scored: Scored{Slug: slug, Score: 0.3 - 0.01*float64(i)}, cat: c, ev: evidence{kind: doubtVectorsOnly}}
		if slug == "first-aid" {
			h.ev.kind = sure
		}
		out = append(out, h)
	}
	p, err := x.parse(q)
	if err != nil {
		t.Fatal(err)
	}
	got := x.byMeaning(p, slices.Clone(out), 8, nil)
	var slugs []string
	for i, h := range got {
		slugs = append(slugs, h.Slug)
		if i > 0 && h.Score > got[i-1].Score {
			t.Errorf("out of score order at %d: %v", i, got)
		}
	}
	if want := []string{"tax", "sourdough", "knots", "manicure", "puppetry", "first-aid", "guitar"}; len(slugs) < len(want) || !slices.Equal(slugs[:len(want)], want) {
		t.Errorf("got %v, want %v first", slugs, want)
	}
	if short := x.byMeaning(p, slices.Clone(out[:candidatePool]), candidatePool, nil); len(short) != candidatePool {
		t.Errorf("a list of %d candidates grew to %v", candidatePool, short)
	}
}

// pastimes are eight categories far apart in meaning, of which a
// question about sore fingertips from strings is about the guitar alone.
func pastimes() []registry.Category {
	return []registry.Category{
		cat("guitar", "Guitar", "Learning the guitar: chords, frets, strumming and fingerpicking.", "guitar chords", "strumming patterns"),
		cat("knots", "Knots", "Tying knots in rope and cord for sailing and climbing.", "bowline knot", "rope splicing"),
		cat("first-aid", "First Aid", "Treating cuts, burns and sprains until help arrives.", "treat a burn", "sprained ankle"),
		cat("manicure", "Manicure", "Nail care at home: filing, polish and cuticles.", "nail polish", "cuticle care"),
		cat("ironing", "Ironing", "Ironing shirts and trousers without shine or creases.", "iron a shirt", "steam press"),
		cat("puppetry", "Puppetry", "Making marionettes and working them on wires.", "marionette making", "hand puppets"),
		cat("tax", "Tax Returns", "Filing an income tax return and claiming deductions.", "file taxes", "tax deductions"),
		cat("sourdough", "Sourdough Bread", "Baking bread with a starter.", "sourdough starter", "bread baking"),
	}
}

// A query none of whose words has a vector goes on by the meaning of the
// categories it meets: a made-up guitar model is closer to the ukulele
// than to knots or taxes.
func TestLongListByHitsMeaning(t *testing.T) {
	x := Build([]registry.Category{
		cat("guitar", "Guitar", "Learning the guitar: chords, frets, strumming and fingerpicking.", "guitar chords", "zorvex guitars"),
		cat("knots", "Knots", "Tying knots in rope and cord for sailing and climbing.", "bowline knot", "rope splicing"),
		cat("tax", "Tax Returns", "Filing an income tax return and claiming deductions.", "file taxes", "tax deductions"),
		cat("ukulele", "Ukulele", "Playing the ukulele: tuning, chords and songs for beginners.", "ukulele chords", "ukulele songs"),
		cat("sourdough", "Sourdough Bread", "Baking bread with a starter.", "sourdough starter", "bread baking"),
	})
	got, err := x.Match("zorvex", candidatePool+1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 || got[0].Slug != "guitar" || got[1].Slug != "ukulele" {
		t.Errorf("got %v, want guitar then ukulele", got)
	}
}

// A word without a vector that ends in a curated word with one takes that
// word's vector (headVector): "microinverters" is a kind of inverter. A
// short modifier ("rebase") or head does not make a compound, nor does a
// head the curator never wrote.
func TestCompoundHeadVector(t *testing.T) {
	x := Build([]registry.Category{{Slug: "home-solar", Category: &gen.Category{Name: "Home Solar", Description: "Rooftop panels, inverters and batteries.", QueryPatterns: []string{"solar panels", "string inverter"}}}})
	for w, head := range map[string]string{"microinverters": "inverters", "megapanels": "panels", "repanels": "", "microphones": ""} {
		want := int32(-1)
		if head != "" {
			if want = words.Vector(head); want < 0 {
				t.Fatalf("%s has no vector", head)
			}
		}
		if got := x.headVector(w); got != want {
			t.Errorf("%s: vector %d, want %d (%q)", w, got, want, head)
		}
	}
}

// A category the semantic channel offered (word vectors alone) comes
// closer in a long list by meaningSemBoost of its semantic score than
// the whole question's meaning alone would put it.
func TestLongListSemanticBoost(t *testing.T) {
	x := Build(pastimes())
	p, err := x.parse("my fingertips are sore from the strings")
	if err != nil {
		t.Fatal(err)
	}
	var out []hit
	for i, slug := range []string{"tax", "sourdough", "ironing", "manicure", "first-aid"} {
		out = append(out, hit{Scored: Scored{Slug: slug, Score: 0.3 - 0.01*float64(i)}, cat: uint32(slices.Index(x.slugs, slug)), ev: evidence{kind: doubtVectorsOnly}})
	}
	at := func(list []hit, slug string) int {
		return slices.IndexFunc(list, func(h hit) bool { return h.Slug == slug })
	}
	plain := x.byMeaning(p, slices.Clone(out), len(x.slugs), nil)
	last := plain[len(plain)-1]
	if at(plain, last.Slug) <= candidatePool {
		t.Fatalf("too few by meaning: %v", plain)
	}
	offered := append(slices.Clone(out), hit{Scored: Scored{Slug: last.Slug, Score: 0.1}, cat: last.cat, sem: 1, ev: evidence{kind: doubtVectorsOnly}})
	if got := x.byMeaning(p, offered, len(x.slugs), nil); at(got, last.Slug) >= at(plain, last.Slug) {
		t.Errorf("%s stayed at %d of %v (plain %v)", last.Slug, at(got, last.Slug), got, plain)
	}
}

// A category the meaning adds scores by its own closeness, not by how
// many came before it: forty categories that say the same thing score
// the same, where a ceiling lowered at each step took the later ones to
// the floor, and lists merged by score could not tell them apart.
func TestLongListScoresDoNotCompound(t *testing.T) {
	var cats []registry.Category
	for i := range 40 {
		cats = append(cats, registry.Category{Slug: fmt.Sprintf("guitar-%02d", i), Category: &gen.Category{
			Name: "Guitar", Description: "Learning the guitar: chords, frets, strumming and fingerpicking.", QueryPatterns: []string{"guitar chords"}}})
	}
	x := Build(cats)
	p, err := x.parse("my fingertips are sore from the strings")
	if err != nil {
		t.Fatal(err)
	}
	got := x.byMeaning(p, nil, 45, nil)
	if len(got) != 40 {
		t.Fatalf("got %d categories, want the 40 close in meaning", len(got))
	}
	for _, h := range got {
		if h.Score != got[0].Score || h.Score <= minScore {
			t.Fatalf("scores differ or sit at the floor: first %v, %s %v", got[0].Score, h.Slug, h.Score)
		}
	}
}

// Near marks, in a long list only, the categories whose meaning is
// closer to the question's than the registry's mean by nearMargin: the
// guitar for sore fingertips from strings, not the far pastimes; and
// nothing when no word of the question has a vector, as the meaning the
// list then goes by is its first categories', not the question's.
func TestNearInMeaning(t *testing.T) {
	x := Build(pastimes())
	near := func(q string, limit int) []string {
		t.Helper()
		got, err := x.Match(q, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range got {
			if s.Near {
				out = append(out, s.Slug)
			}
		}
		return out
	}
	if got := near("my fingertips are sore from the strings", 8); !slices.Contains(got, "guitar") || slices.Contains(got, "tax") || slices.Contains(got, "ironing") {
		t.Errorf("near %v, want guitar and not tax or ironing", got)
	}
	if got := near("my fingertips are sore from the strings", candidatePool); len(got) != 0 {
		t.Errorf("a list of %d says near %v", candidatePool, got)
	}
	if got := near("zzqx wqxz", 8); len(got) != 0 {
		t.Errorf("a question without word vectors: near %v", got)
	}
}

// Lead, in a long list only, is leadKey of each grounded or near
// category: the grounded among the first meaningLead come in its order
// (leadByMeaning), and a near category that shares no word with the
// question has one too, so a no-match answer can weigh it against weak
// word matches; a category neither grounded nor near, and every category
// of a short list, has none.
func TestLeadInLongLists(t *testing.T) {
	x := Build(pastimes())
	got, err := x.Match("my fingertips are sore from the strings and the rope", 8)
	if err != nil {
		t.Fatal(err)
	}
	var grounded []float64
	nearOnly := 0
	for _, s := range got {
		switch {
		case s.Grounded:
			grounded = append(grounded, s.Lead)
		case s.Near:
			nearOnly++
		}
		if (s.Grounded || s.Near) != (s.Lead != 0) {
			t.Errorf("%s: grounded %v, near %v, lead %v", s.Slug, s.Grounded, s.Near, s.Lead)
		}
	}
	if len(grounded) == 0 || nearOnly == 0 {
		t.Fatalf("want grounded and near-only categories: %+v", got)
	}
	if !slices.IsSortedFunc(grounded, func(a, b float64) int { return cmpDesc(a, b) }) {
		t.Errorf("grounded leads %v not in the list's order", grounded)
	}
	short, err := x.Match("my fingertips are sore from the strings and the rope", candidatePool)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range short {
		if s.Lead != 0 {
			t.Errorf("a list of %d: %s leads %v", candidatePool, s.Slug, s.Lead)
		}
	}
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
