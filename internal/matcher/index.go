package matcher

import (
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/three-good-sources/3gs/internal/matcher/typo"
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

// tuning holds the constants of the scoring model (see rank.go). It is a
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
	// related maps the stem of a word WordNet relates to registry terms
	// (data/related.txt), either way, to those terms, with the quality of
	// each link (relatedTerms). Exact stems of the registry are never in
	// it.
	related relatedTable
	// relatedDone is closed once related is built (Build).
	relatedDone chan struct{}
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
	// catVecs[c] indexes simTerms and simVecs: the words with a vector
	// that the curator wrote about category c, for the confidence
	// (strangers); nil with simTerms.
	catVecs [][]int32
	// meaning holds each category's meaning (meaning.go), meaningDims
	// int8 a row; nil with simTerms.
	meaning     []int8
	meaningDims int
	// semCache holds semNear's findings per query word vector.
	semCache semCache

	tune     tuning
	strength [1 << numFields]float32 // strengthTable(&tune)

	// scratch holds *scratch sized for this index: per-category arrays
	// a match would otherwise allocate. It pays: BenchmarkMatch/mix-v1
	// allocates 227 B/op with it and 7,476 without, BenchmarkMatch/10000
	// 380 B/op and 350,500.
	scratch sync.Pool
	// wordMemo holds what resolve reported for the query words met lately
	// (wordmemo.go).
	wordMemo wordMemo
}

// elemMark tags the entry that opens a short element in Index.elems; the
// low bits hold its Field. Term ids stay below it (a registry would need
// two billion distinct words to reach it).
const elemMark = 1 << 31

// shortFields are kept as sequences for phrase scoring.
func isShort(f Field) bool { return f <= FieldSourceHost }

// New builds the index of a registry.
func New(r *registry.Registry) *Index { return Build(r.Categories()) }

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

// maskOf finds the fields term t has in category c.
func (x *Index) maskOf(t, c uint32) (uint8, bool) {
	k, ok := x.posting(t, c)
	if !ok {
		return 0, false
	}
	return x.postMask[k], true
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
