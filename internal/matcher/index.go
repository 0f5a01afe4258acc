package matcher

import (
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/three-good-sources/3gs/internal/matcher/typo"
	"github.com/three-good-sources/3gs/internal/matcher/words"
	"github.com/three-good-sources/3gs/internal/registry"
)

// Field is a part of a category that the matcher reads.
type Field uint8

// The fields, strongest evidence first. A query word found in a short,
// curated field (slug, name, query patterns) says more about the topic than
// one found in a source's "why" sentence.
const (
	FieldSlug Field = iota
	FieldName
	FieldPattern
	FieldSourceName
	FieldSourceHost
	FieldDescription
	FieldSourceWhy
	FieldSourceType
	numFields
)

var fieldNames = [numFields]string{"slug", "name", "pattern", "source name", "source host", "description", "source why", "source type"}

func (f Field) String() string { return fieldNames[f] }

// tuning holds the constants of the scoring model (see score.go). It is a
// variable only so that tests can measure a change against the evaluation
// sets; the server never changes it.
type tuning struct {
	// fieldStrength is how much a query word found in a field proves.
	fieldStrength [numFields]float64
	// multiFieldBonus is added for each field after the strongest that a
	// word appears in, up to strengthCap: words a curator repeats across
	// fields are what the category is about, so "security" says more
	// about a category named "Linux Security Hardening" than about one
	// that mentions security once.
	multiFieldBonus, strengthCap float64
	// genericFactor scales the weight of generic request words
	// (data/generic.txt) and bare numbers.
	genericFactor float64
	// unknownWeight is the weight of the first query word the registry
	// does not know; the k-th weighs unknownWeight/k^unknownDecay.
	unknownWeight, unknownDecay float64
	// phraseWeight is the share of the score that depends on covering a
	// whole short field; adjacencyWeight how much of the remaining gap
	// adjacent word pairs can close.
	phraseWeight, adjacencyWeight float64
	// An ordinary English word the registry lacks, with Zipf value z,
	// weighs unknownWeight·clamp((commonTop − z)/commonSpan, commonFloor, 1).
	commonTop, commonSpan, commonFloor float64
	// doubtFactor scales the score of a category the evidence does not
	// make sure of (see doubt in confidence.go): below 0.4, the default
	// threshold, whatever the score was, while keeping the order.
	doubtFactor float64
}

var tune = tuning{
	fieldStrength: [numFields]float64{
		FieldSlug:        1,
		FieldName:        1,
		FieldPattern:     1,
		FieldSourceName:  0.9,
		FieldSourceHost:  0.85,
		FieldDescription: 0.7,
		FieldSourceWhy:   0.7,
		FieldSourceType:  0.35,
	},
	multiFieldBonus: 0.1,
	strengthCap:     1.4,
	genericFactor:   0.3,
	unknownWeight:   0.8,
	unknownDecay:    1,
	phraseWeight:    0.35,
	adjacencyWeight: 0.3,
	commonTop:       5.5,
	commonSpan:      3,
	commonFloor:     0.1,
	doubtFactor:     0.39,
}

// strengthTable[m] is the strength of a word found in the fields of mask m.
func strengthTable(t *tuning) (out [1 << numFields]float32) {
	for m := 1; m < len(out); m++ {
		best := 0.0
		for f := range numFields {
			if m&(1<<f) != 0 {
				best = max(best, t.fieldStrength[f])
			}
		}
		out[m] = float32(min(t.strengthCap, best+t.multiFieldBonus*float64(bits.OnesCount(uint(m))-1)))
	}
	return out
}

// Index is the matcher: an inverted index over every field of every
// category, built once per registry and then only read, so one Index
// serves any number of concurrent queries.
//
// Terms are word stems, numbered in sorted order (so a prefix is a range).
// A term's postings list the categories that contain it, each with the
// set of fields it appears in. Short fields (slug, name, patterns, source
// names and hosts) are also kept as term sequences, to reward queries that
// cover a whole phrase in order.
type Index struct {
	slugs []string // category number → slug

	terms  []string  // term id → stem, sorted (a map would double the memory)
	weight []float32 // term id → weight in (0, 1]
	// termSlots is an open-addressing table over terms, for exact lookups
	// in O(1): a power-of-two number of slots, each 0 or 1 + a term id,
	// at most two thirds full (four to twelve bytes a term, where a map
	// would cost the strings again). Prefix search stays on the sorted
	// terms.
	termSlots []uint32

	postStart []uint32 // term id → first posting; len(terms)+1 entries
	postCat   []uint32 // category numbers, ascending within a term
	postMask  []uint8  // fields the term appears in for that category
	// postShare is the term's largest share of one short field of that
	// category, in 255ths: how much of the field a query holding only this
	// word would cover. It bounds the phrase score before the fields are
	// read, which is what lets a one-word query among thousands of
	// categories go straight to the ones that are named by that word.
	postShare []uint8

	elemStart []uint32 // category → first element token; len(slugs)+1 entries
	elems     []uint32 // term ids; elemMark|field opens each element

	typos typo.Index
	// related maps the stem of a word WordNet relates to a registry term
	// (data/related.txt) to the terms it reaches, with the quality of each
	// link. Exact stems of the registry are never in it.
	related map[string][]cand
	// simTerms are the terms with a word vector (simVecs) that the semantic
	// channel (vectors.go) compares each query word with; empty past
	// maxSimTerms.
	simTerms []uint32
	simVecs  []int32
	// What the semantic channel reads per query word, laid out at build:
	// simRows holds the vectors of simTerms contiguously (64 bytes each),
	// simNorms their norms, and simPost[simPostStart[i]:simPostStart[i+1]]
	// the categories whose curated fields hold simTerms[i], ascending, each
	// marked simProse when only its description does.
	simRows      []int8
	simNorms     []float32
	simPostStart []uint32
	simPost      []uint32
	// catVecs[c] are the vectors of what the curator wrote about
	// category c, for the confidence (strangers); nil with simTerms.
	catVecs [][]int32
	// semCache holds semNear's findings per query word vector.
	semCache semCache

	tune     tuning
	strength [1 << numFields]float32 // strengthTable(&tune)

	scratch sync.Pool // *scratch sized for this index
}

// elemMark tags the entry that opens a short element in Index.elems; the
// low bits hold its Field. Term ids stay below it (a registry would need
// two billion distinct words to reach it).
const elemMark = 1 << 31

// shortFields are kept as sequences for phrase scoring.
func isShort(f Field) bool { return f <= FieldSourceHost }

// New builds the index of a registry.
func New(r *registry.Registry) *Index { return Build(r.Categories()) }

// Build indexes cats. It is New for callers that have categories without a
// registry file, such as benchmarks with generated registries.
//
// Words are read and stemmed by one builder per core, each over a
// contiguous run of categories; their vocabularies are then merged.
func Build(cats []registry.Category) *Index {
	x := &Index{slugs: make([]string, len(cats)), elemStart: make([]uint32, 0, len(cats)+1), tune: tune}
	x.strength = strengthTable(&x.tune)
	workers := workersFor(len(cats))
	parts := make([]*builder, workers)
	inParallel(len(cats), workers, func(w, lo, hi int) {
		// Room for the postings and elements of a category as curators
		// write them (about 52 and 54 in registrytest's), so the slices
		// are rarely grown.
		b := &builder{rawTerm: map[string]uint32{}, stemTerm: map[string]uint32{},
			postTerm: make([]uint32, 0, 56*(hi-lo)), postMask: make([]uint8, 0, 56*(hi-lo)),
			postStart: make([]uint32, 0, hi-lo+1), elems: make([]uint32, 0, 56*(hi-lo))}
		parts[w] = b
		for i := lo; i < hi; i++ {
			x.slugs[i] = cats[i].Slug
			b.category(uint32(i), cats[i])
		}
	})

	// One vocabulary, numbered in sorted order; local[w][id] is the final
	// id of builder w's term id.
	global := map[string]uint32{}
	var stems []string
	var words []bool
	var vecs []int32
	local := make([][]uint32, workers)
	for w, b := range parts {
		local[w] = make([]uint32, len(b.stems))
		for id, st := range b.stems {
			g, ok := global[st]
			if !ok {
				g = uint32(len(stems))
				global[st] = g
				stems = append(stems, st)
				words = append(words, false)
				vecs = append(vecs, -1)
			}
			words[g] = words[g] || b.split[id]
			if vecs[g] < 0 {
				vecs[g] = b.vec[id]
			}
			local[w][id] = g
		}
	}
	order := make([]uint32, len(stems))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, c uint32) int { return strings.Compare(stems[a], stems[c]) })
	renum := make([]uint32, len(order))
	x.terms = make([]string, len(order))
	typoTerms := make([]bool, len(order))
	for newID, old := range order {
		renum[old] = uint32(newID)
		x.terms[newID] = stems[old]
		typoTerms[newID] = words[old]
	}
	for w := range local {
		for id, g := range local[w] {
			local[w][id] = renum[g]
		}
	}
	x.termSlots = hashTerms(x.terms)
	// The typo index needs only the terms: build it on another core
	// while the rest is assembled.
	typosDone := make(chan typo.Index)
	go func() { typosDone <- typo.Build(x.terms, typoTerms) }()

	// The builders' elements and postings are renumbered and placed by
	// one goroutine per builder, each into its own part of the index.
	eachPart := func(fn func(w int, b *builder)) {
		var wg sync.WaitGroup
		for w, b := range parts {
			wg.Go(func() { fn(w, b) })
		}
		wg.Wait()
	}
	total := 0
	elemBase := make([]uint32, len(parts))
	for w, b := range parts {
		elemBase[w] = uint32(total)
		for _, off := range b.elemStart {
			x.elemStart = append(x.elemStart, elemBase[w]+off)
		}
		total += len(b.elems)
	}
	x.elemStart = append(x.elemStart, uint32(total))
	x.elems = make([]uint32, total)
	eachPart(func(w int, b *builder) {
		out := x.elems[elemBase[w]:]
		for i, t := range b.elems {
			if t&elemMark == 0 {
				t = local[w][t]
			}
			out[i] = t
		}
		b.elems = nil // copied: let the collector have it
	})

	// Postings, grouped by term by counting sort; categories stay ascending
	// because builders hold ascending runs and builder w's postings of a
	// term go after those of builders before it. count[w][t] is how many
	// postings of term t builder w has, then where its next one goes.
	count := make([][]uint32, len(parts))
	eachPart(func(w int, b *builder) {
		count[w] = make([]uint32, len(x.terms))
		for _, t := range b.postTerm {
			count[w][local[w][t]]++
		}
	})
	x.postStart = make([]uint32, len(x.terms)+1)
	for t := range x.terms {
		at := x.postStart[t]
		for w := range parts {
			at, count[w][t] = at+count[w][t], at
		}
		x.postStart[t+1] = at
	}
	npost := x.postStart[len(x.terms)]
	x.postCat = make([]uint32, npost)
	x.postMask = make([]uint8, npost)
	eachPart(func(w int, b *builder) {
		next := count[w]
		cat := b.first
		for k, t := range b.postTerm {
			for uint32(k) == b.postStart[cat-b.first+1] {
				cat++
			}
			t = local[w][t]
			x.postCat[next[t]] = cat
			x.postMask[next[t]] = b.postMask[k]
			next[t]++
		}
		b.postTerm, b.postMask, b.postStart = nil, nil, nil
	})
	// IDF: a term in every category is worth little, one in a single
	// category is worth 1. Normalized by ln(1+N) so that weights mean the
	// same for a registry of 10 categories and one of 100,000.
	n := float64(max(len(cats), 1))
	x.weight = make([]float32, len(x.terms))
	for t := range x.terms {
		df := float64(x.postStart[t+1] - x.postStart[t])
		w := math.Log1p(n/df) / math.Log1p(n)
		if isGeneric(x.terms[t]) {
			w *= x.tune.genericFactor
		}
		x.weight[t] = float32(w)
		x.weight[t] *= x.proseOnly(uint32(t))
	}
	x.shares()
	x.related = relatedTerms(x.terms, typoTerms, x.term)
	x.similarTerms(order, vecs)
	x.typos = <-typosDone
	x.scratch.New = func() any { return newScratch(len(cats)) }
	return x
}

// similarTerms lists the terms that have a word vector and appear in what
// a curator wrote about some category (vector links, like related words,
// count only there), for the semantic channel; order maps new term ids to
// the ids vecs is indexed by.
func (x *Index) similarTerms(order []uint32, vecs []int32) {
	for t, old := range order {
		v := vecs[old]
		if v < 0 || isGeneric(x.terms[t]) {
			continue
		}
		_, masks := x.postings(uint32(t))
		if !slices.ContainsFunc(masks, func(m uint8) bool { return m&curatedFields != 0 }) {
			continue
		}
		x.simTerms = append(x.simTerms, uint32(t))
		x.simVecs = append(x.simVecs, v)
	}
	if len(x.simTerms) > maxSimTerms || len(x.slugs) > semAllCats {
		x.simTerms, x.simVecs = nil, nil
		return
	}
	x.simNorms = make([]float32, len(x.simVecs))
	x.simPostStart = make([]uint32, 1, len(x.simVecs)+1)
	if len(x.simVecs) > 0 {
		x.simRows = make([]int8, 0, len(x.simVecs)*len(words.Row(x.simVecs[0])))
	}
	for i, v := range x.simVecs {
		x.simRows = append(x.simRows, words.Row(v)...)
		x.simNorms[i] = words.Norm(v)
		cats, masks := x.postings(x.simTerms[i])
		for k, c := range cats {
			switch m := masks[k]; {
			case m&keyFields != 0:
				x.simPost = append(x.simPost, c)
			case m&curatedFields != 0:
				x.simPost = append(x.simPost, c|simProse)
			}
		}
		x.simPostStart = append(x.simPostStart, uint32(len(x.simPost)))
	}
	x.semCache.slots = make([]atomic.Pointer[semEntry], semCacheSlots)
	x.catVecs = make([][]int32, len(x.slugs))
	for i, t := range x.simTerms {
		cats, masks := x.postings(t)
		for k, c := range cats {
			if masks[k]&curatedFields != 0 {
				x.catVecs[c] = append(x.catVecs[c], x.simVecs[i])
			}
		}
	}
}

// proseOnly is the factor on the weight of term t: 1, unless every
// category has it only in source prose (why-lines, source types) and it is
// ordinary English, as "next" or "team" in "the next step for a team":
// then it weighs as an ordinary word the registry lacks would, since the
// curator never used it to say what a category is about. Its stem is
// looked up as a word, which holds for most ordinary words.
func (x *Index) proseOnly(t uint32) float32 {
	_, masks := x.postings(t)
	for _, m := range masks {
		if m&^proseFields != 0 {
			return 1
		}
	}
	z, common := words.Zipf(x.terms[t])
	if !common {
		return 1
	}
	return commonness(&x.tune, z)
}

// proseFields are the sentences about sources, not names of anything.
const proseFields = 1<<FieldSourceWhy | 1<<FieldSourceType

// shares fills postShare from the short fields, once the weights are
// known. Categories are independent, so the work is split across cores.
func (x *Index) shares() {
	x.postShare = make([]uint8, len(x.postCat))
	inParallel(len(x.slugs), workersFor(len(x.slugs)), func(_, lo, hi int) {
		find := postingFinder{x: x, from: uint32(lo), at: make([]uint32, len(x.terms))}
		for c := lo; c < hi; c++ {
			x.categoryShares(uint32(c), &find)
		}
	})
}

// postingFinder finds the postings of categories taken in ascending
// order, as posting does: each term's postings are ascending too, so a
// cursor per term moves forward through them, where a binary search per
// lookup read scattered entries of the long lists of common words (the
// shares took a tenth of a 100,000-category build).
type postingFinder struct {
	x    *Index
	from uint32   // the first category asked about
	at   []uint32 // term → 1 + its cursor into postCat, 0 before first use
}

// posting is x.posting(t, c), for c no smaller than any asked before.
func (f *postingFinder) posting(t, c uint32) (uint32, bool) {
	x := f.x
	k := f.at[t]
	if k == 0 {
		k, _ = x.posting(t, f.from)
	} else {
		k--
	}
	end := x.postStart[t+1]
	for k < end && x.postCat[k] < c {
		k++
	}
	f.at[t] = k + 1
	return k, k < end && x.postCat[k] == c
}

// workersFor is how many cores to spend on n categories.
func workersFor(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n/minCategoriesPerWorker)) }

// inParallel splits [0, n) into workers contiguous runs and calls
// fn(w, lo, hi) for run w on its own goroutine, returning when all are done.
func inParallel(n, workers int, fn func(w, lo, hi int)) {
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { fn(w, min(w*per, n), min((w+1)*per, n)) })
	}
	wg.Wait()
}

func (x *Index) categoryShares(c uint32, find *postingFinder) {
	for elem := range x.elements(c) {
		elem = elem[1:]
		var total float32
		for _, t := range elem {
			total += x.weight[t]
		}
		for i, t := range elem {
			if slices.Index(elem, t) != i {
				continue // counted with its first occurrence
			}
			var own float32
			for _, u := range elem {
				if u == t {
					own += x.weight[t]
				}
			}
			share := uint8(min(255, math.Ceil(float64(own/total)*255)))
			if k, ok := find.posting(t, c); ok {
				x.postShare[k] = max(x.postShare[k], share)
			}
		}
	}
}

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

// Len is the number of categories indexed.
func (x *Index) Len() int { return len(x.slugs) }

// Terms is the number of distinct terms (stems) indexed.
func (x *Index) Terms() int { return len(x.terms) }

// term looks up the id of a stem.
func (x *Index) term(stem string) (uint32, bool) {
	mask := uint32(len(x.termSlots) - 1)
	for i := termHash(stem) & mask; ; i = (i + 1) & mask {
		v := x.termSlots[i]
		if v == 0 {
			return 0, false
		}
		if x.terms[v-1] == stem {
			return v - 1, true
		}
	}
}

// termHash is 32-bit FNV-1a: fixed, so a registry's table is the same
// from run to run, and cheap for the short strings stems are.
func termHash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	// FNV's low bits mix poorly on their own; fold the high ones in.
	return h ^ h>>16
}

// hashTerms builds the termSlots table of terms, with linear probing.
func hashTerms(terms []string) []uint32 {
	n := 4
	for n < len(terms)+len(terms)/2+1 {
		n *= 2
	}
	slots := make([]uint32, n)
	mask := uint32(n - 1)
	for id, t := range terms {
		i := termHash(t) & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = uint32(id) + 1
	}
	return slots
}

// postings returns the categories and field masks of term t.
func (x *Index) postings(t uint32) ([]uint32, []uint8) {
	s, e := x.postStart[t], x.postStart[t+1]
	return x.postCat[s:e], x.postMask[s:e]
}

// posting finds the posting of term t for category c: its index in
// postCat, postMask and postShare.
func (x *Index) posting(t, c uint32) (uint32, bool) {
	cats, _ := x.postings(t)
	j, ok := slices.BinarySearch(cats, c)
	return x.postStart[t] + uint32(j), ok
}

// postingShares returns the postShare entries of term t.
func (x *Index) postingShares(t uint32) []uint8 {
	return x.postShare[x.postStart[t]:x.postStart[t+1]]
}

// prefixRange returns the ids of the terms that start with p.
func (x *Index) prefixRange(p string) (lo, hi int) {
	lo, _ = slices.BinarySearch(x.terms, p)
	hi = lo
	for hi < len(x.terms) && strings.HasPrefix(x.terms[hi], p) {
		hi++
	}
	return lo, hi
}
