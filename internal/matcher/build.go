package matcher

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/three-good-sources/3gs/internal/matcher/typo"
	"github.com/three-good-sources/3gs/internal/matcher/words"
	"github.com/three-good-sources/3gs/internal/registry"
)

// Build indexes cats. It is New for callers that have categories without a
// registry file, such as benchmarks with generated registries.
//
// Words are read and stemmed by one builder per core, each over a
// contiguous run of categories; their vocabularies are then merged.
func Build(cats []registry.Category) *Index {
	x := &Index{slugs: make([]string, len(cats)), elemStart: make([]uint32, 0, len(cats)+1), tune: tune}
	x.strength = strengthTable(&x.tune)
	parts := x.read(cats)
	v := merge(parts)
	order, typoTerms := x.number(&v)
	x.termSlots = hashTerms(x.terms)
	// The typo index needs only the terms: build it on another core
	// while the rest is assembled.
	typosDone := make(chan typo.Index)
	go func() { typosDone <- typo.Build(x.terms, typoTerms) }()
	// The related words, read from the whole list, are only needed by a
	// question with a word the registry lacks: they are found on another
	// core too, and the first such question waits for them (relatedOf),
	// not the index.
	x.relatedDone = make(chan struct{})
	go func() {
		x.related = relatedTerms(x.terms, typoTerms, x.term)
		close(x.relatedDone)
	}()
	x.placeElements(parts, v.local)
	x.placePostings(parts, v.local)
	x.weigh(len(cats))
	x.shares()
	x.similarTerms(order, v.vecs)
	x.meanings()
	x.typos = <-typosDone
	x.scratch.New = func() any { return newScratch(len(cats)) }
	return x
}

// read runs one builder per core over cats, each over a contiguous run of
// them, and returns the builders in order.
func (x *Index) read(cats []registry.Category) []*builder {
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
	return parts
}

// vocabulary is the builders' vocabularies merged, in order of first
// appearance: local[w][id] is the merged id of builder w's term id.
type vocabulary struct {
	stems []string
	words []bool  // the term occurs as a word of its own in some category
	vecs  []int32 // the word vector of one of its words, or -1
	local [][]uint32
}

func merge(parts []*builder) vocabulary {
	global := map[string]uint32{}
	v := vocabulary{local: make([][]uint32, len(parts))}
	for w, b := range parts {
		v.local[w] = make([]uint32, len(b.stems))
		for id, st := range b.stems {
			g, ok := global[st]
			if !ok {
				g = uint32(len(v.stems))
				global[st] = g
				v.stems = append(v.stems, st)
				v.words = append(v.words, false)
				v.vecs = append(v.vecs, -1)
			}
			v.words[g] = v.words[g] || b.split[id]
			if v.vecs[g] < 0 {
				v.vecs[g] = b.vec[id]
			}
			v.local[w][id] = g
		}
	}
	return v
}

// number gives the terms of v their ids in sorted order, in x.terms, and
// renumbers v.local to match. order maps a new id to v's; typoTerms marks
// the terms that stand as words of their own, which the typo index holds.
func (x *Index) number(v *vocabulary) (order []uint32, typoTerms []bool) {
	order = make([]uint32, len(v.stems))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, c uint32) int { return strings.Compare(v.stems[a], v.stems[c]) })
	renum := make([]uint32, len(order))
	x.terms = make([]string, len(order))
	typoTerms = make([]bool, len(order))
	for newID, old := range order {
		renum[old] = uint32(newID)
		x.terms[newID] = v.stems[old]
		typoTerms[newID] = v.words[old]
	}
	for w := range v.local {
		for id, g := range v.local[w] {
			v.local[w][id] = renum[g]
		}
	}
	return order, typoTerms
}

// eachPart calls fn for every builder, one goroutine each, and returns
// when all are done: the builders' elements and postings are renumbered
// and placed in parallel, each into its own part of the index.
func eachPart(parts []*builder, fn func(w int, b *builder)) {
	var wg sync.WaitGroup
	for w, b := range parts {
		wg.Go(func() { fn(w, b) })
	}
	wg.Wait()
}

// placeElements copies the builders' short fields into x.elems, with the
// merged term ids.
func (x *Index) placeElements(parts []*builder, local [][]uint32) {
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
	eachPart(parts, func(w int, b *builder) {
		out := x.elems[elemBase[w]:]
		for i, t := range b.elems {
			if t&elemMark == 0 {
				t = local[w][t]
			}
			out[i] = t
		}
		b.elems = nil // copied: let the collector have it
	})
}

// placePostings groups the builders' postings by term, by counting sort;
// categories stay ascending because builders hold ascending runs and
// builder w's postings of a term go after those of builders before it.
// count[w][t] is how many postings of term t builder w has, then where
// its next one goes.
func (x *Index) placePostings(parts []*builder, local [][]uint32) {
	count := make([][]uint32, len(parts))
	eachPart(parts, func(w int, b *builder) {
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
	eachPart(parts, func(w int, b *builder) {
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
}

// weigh sets the terms' weights, for a registry of n categories. IDF: a
// term in every category is worth little, one in a single category is
// worth 1. Normalized by ln(1+N) so that weights mean the same for a
// registry of 10 categories and one of 100,000.
func (x *Index) weigh(n int) {
	total := float64(max(n, 1))
	x.weight = make([]float32, len(x.terms))
	for t := range x.terms {
		df := float64(x.postStart[t+1] - x.postStart[t])
		w := math.Log1p(total/df) / math.Log1p(total)
		if isGeneric(x.terms[t]) {
			w *= x.tune.genericFactor
		}
		x.weight[t] = float32(w)
		x.weight[t] *= x.proseOnly(uint32(t))
	}
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
		x.simRows = make([]int8, 0, len(x.simVecs)*words.Dims())
	}
	for i, v := range x.simVecs {
		x.simRows = words.AppendRow(x.simRows, v)
		x.simNorms[i] = words.NormOf(x.simRows[len(x.simRows)-words.Dims():])
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
				x.catVecs[c] = append(x.catVecs[c], int32(i))
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
