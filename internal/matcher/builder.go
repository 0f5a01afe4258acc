package matcher

import (
	"strings"
	"unicode/utf8"

	"github.com/three-good-sources/3gs/internal/matcher/words"
	"github.com/three-good-sources/3gs/internal/registry"
)

// builder accumulates the index one category at a time.
type builder struct {
	rawTerm  map[string]uint32 // lowercase word → term, so each word is stemmed once
	stemTerm map[string]uint32
	stems    []string // term id (first-seen order) → stem
	split    []bool   // term id → the term occurs as a word of its own, not only joined
	vec      []int32  // term id → the word vector of one of its words, or -1
	mask     []uint8  // term id → fields it has in the current category
	inCat    []uint32 // terms of the current category
	// The postings, category by category: the builder's i-th category
	// (first+i) has postTerm and postMask [postStart[i], postStart[i+1]).
	// Two slices and a start per category take 5 bytes a posting where a
	// slice of {term, cat, mask} took 12: 40 MB less at 100,000
	// categories, at the moment the index is assembled.
	first     uint32
	postTerm  []uint32
	postMask  []uint8
	postStart []uint32
	elems     []uint32
	// lower holds the lowercase form of the word being read, if it has
	// capitals (scan).
	lower []byte
	// elemStart[i] is where the builder's i-th category starts in elems.
	elemStart []uint32
}

// minCategoriesPerWorker: below this, one builder is faster than merging.
const minCategoriesPerWorker = 2000

// category reads one category's fields.
func (b *builder) category(num uint32, c registry.Category) {
	if len(b.postStart) == 0 {
		b.first = num
		b.postStart = append(b.postStart, 0)
	}
	b.elemStart = append(b.elemStart, uint32(len(b.elems)))
	b.field(FieldSlug, strings.ReplaceAll(c.Slug, "-", " "))
	b.field(FieldName, c.Name)
	b.field(FieldDescription, c.Description)
	for _, p := range c.QueryPatterns {
		b.field(FieldPattern, p)
	}
	for _, s := range c.Sources {
		b.field(FieldSourceName, s.Name)
		b.field(FieldSourceHost, hostText(s.URL))
		b.field(FieldSourceWhy, s.Why)
		b.field(FieldSourceType, string(s.Type))
	}
	b.endCategory()
}

// term returns the id of raw's stem; word says raw stands as a word of
// its own (not only joined into a compound).
func (b *builder) term(raw string, word bool) uint32 {
	id, ok := b.rawTerm[raw]
	if !ok {
		s := stem(raw)
		id, ok = b.stemTerm[s]
		if !ok {
			id = uint32(len(b.stems))
			s = strings.Clone(s) // it may be raw, which lies in b.lower
			b.stems = append(b.stems, s)
			b.split = append(b.split, false)
			b.vec = append(b.vec, -1)
			b.mask = append(b.mask, 0)
			b.stemTerm[s] = id
		}
		b.rawTerm[strings.Clone(raw)] = id
		if word && b.vec[id] < 0 {
			b.vec[id] = words.Vector(raw)
		}
	}
	if word {
		b.split[id] = true
	}
	return id
}

func (b *builder) field(f Field, text string) {
	if text == "" {
		return
	}
	bit := uint8(1) << f
	if isShort(f) {
		b.elems = append(b.elems, elemMark|uint32(f))
	}
	scan(b.lowercase(text), &b.lower, func(raw string) {
		t := b.term(raw, true)
		b.mark(t, bit)
		if isShort(f) {
			b.elems = append(b.elems, t)
		}
	}, func(joined string) {
		b.mark(b.term(joined, false), bit)
	})
}

// lowercase is text for scan to lowercase word by word (b.lower holds a
// word with capitals), when text is ASCII, as most names and sentences
// are; otherwise strings.ToLower(text). Lowercasing a copy of every field
// with a capital was a sixth of the builders' time. What a builder keeps
// of a word it clones.
func (b *builder) lowercase(text string) string {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return strings.ToLower(text)
		}
	}
	return text
}

func (b *builder) mark(t uint32, bit uint8) {
	if b.mask[t] == 0 {
		b.inCat = append(b.inCat, t)
	}
	b.mask[t] |= bit
}

func (b *builder) endCategory() {
	for _, t := range b.inCat {
		b.postTerm = append(b.postTerm, t)
		b.postMask = append(b.postMask, b.mask[t])
		b.mask[t] = 0
	}
	b.postStart = append(b.postStart, uint32(len(b.postTerm)))
	b.inCat = b.inCat[:0]
}
