package typo

import (
	"hash/maphash"
	"slices"
	"unicode/utf8"
)

// Index finds the terms within a small edit distance of a word without
// comparing the word to every term. It is a deletion neighbourhood (the
// SymSpell idea): two words at Levenshtein distance d become equal after
// deleting at most d characters from each, so every term is stored under
// each string its deletions make, and a query word looks up its own
// deletions. Candidates are then checked with Distance, which counts a
// swap of neighbours as one edit (the deletion rule above holds for it
// too: "rsut" and "rust" both give "rut").
//
// Terms of TwoDeletionLen to MaxTwoDeletionLen characters are stored with
// up to two deletions, others with one. That covers distance 1 for query
// words of 4+ letters, and distance 2 for words of 8+ letters except
// against terms of 6 letters or of more than 12 (two letters short of the
// query, or long enough that two edits of a long name are rare): the price
// of an index a third the size. Keys are 32-bit hashes in flat arrays, far
// smaller than a map of strings; a hash collision (the bucket's top bits
// and the 16 bits stored agree) only adds a candidate that the distance
// check then drops.
//
// An Index holds term numbers, not the terms: Near is given the same
// slice of terms Build was.
type Index struct {
	// Entries are bucketed by the top bits of their hash (a counting sort,
	// so building is linear): bucket b is keys[start[b]:start[b+1]].
	shift uint
	start []uint32
	keys  []uint16 // low 16 bits of the variant's hash; the bucket holds the top bits
	terms []uint32 // terms[i] is stored under keys[i]
}

var seed = maphash.MakeSeed()

const (
	MinTermLen        = 3  // shortest stored term
	TwoDeletionLen    = 7  // terms this long are stored with two deletions
	MaxTwoDeletionLen = 12 // ... up to this length
	MaxTermLen        = 32 // longer terms are not words anyone misspells
)

func variantHash(v []byte) uint32 { return uint32(maphash.Bytes(seed, v)) }

// Build indexes the terms marked in words (ASCII terms of MinTermLen to
// MaxTermLen bytes; others are left out). The matcher leaves out joined
// compounds ("mailinabox"): they are long, so they would cost the most
// entries, and their parts are indexed as words anyway.
//
// It allocates little beside the index it returns: the entries are
// gathered in one array sized beforehand (a term of n letters makes at
// most 1+n, or with two deletions 1+n+n(n-1)/2, of them), as a growing one
// made the English word list's index (englishTypoOf) allocate 37.5 MB for
// the 4.9 MB it keeps, a burst the server's peak RSS showed on the first
// misspelt question (TestBuildAllocates).
func Build(terms []string, words []bool) Index {
	indexed := func(id int) (depth int, ok bool) {
		t := terms[id]
		n := len(t)
		if !words[id] || n < MinTermLen || n > MaxTermLen || utf8.RuneCountInString(t) != n { // ASCII only
			return 0, false
		}
		if n >= TwoDeletionLen && n <= MaxTwoDeletionLen {
			return 2, true
		}
		return 1, true
	}
	most := 0
	for id, t := range terms {
		if depth, ok := indexed(id); ok {
			n := len(t)
			most += 1 + n
			if depth == 2 {
				most += n * (n - 1) / 2
			}
		}
	}
	// entries are hash<<32 | term, in the order the terms come.
	entries := make([]uint64, 0, most)
	var own [maxDeletions]uint32
	for id, t := range terms {
		depth, ok := indexed(id)
		if !ok {
			continue
		}
		vars := deletionHashes(t, depth, own[:0])
		// The same variant arises from different deletions ("bitcoin"
		// without either "i"); store each once per term.
		slices.Sort(vars)
		for _, h := range slices.Compact(vars) {
			entries = append(entries, uint64(h)<<32|uint64(id))
		}
	}
	bits := uint(1)
	for 8<<bits < len(entries) && bits < 30 { // about 8 entries a bucket
		bits++
	}
	ix := Index{shift: 32 - bits, start: make([]uint32, 1<<bits+1), keys: make([]uint16, len(entries)), terms: make([]uint32, len(entries))}
	for _, e := range entries {
		ix.start[uint32(e>>32)>>ix.shift+1]++
	}
	for b := 1; b < len(ix.start); b++ {
		ix.start[b] += ix.start[b-1]
	}
	next := slices.Clone(ix.start[:len(ix.start)-1])
	for _, e := range entries {
		h := uint32(e >> 32)
		b := h >> ix.shift
		ix.keys[next[b]], ix.terms[next[b]] = uint16(h), uint32(e)
		next[b]++
	}
	return ix
}

// deletionHashes appends to out the variantHash of s and of every string
// made by deleting up to depth (1 or 2) bytes from it, in a fixed order;
// s is ASCII and at most MaxTermLen long. At most maxDeletions hashes
// are appended.
func deletionHashes(s string, depth int, out []uint32) []uint32 {
	var buf, two [MaxTermLen]byte
	n := copy(buf[:], s)
	out = append(out, variantHash(buf[:n]))
	for i := range n {
		one := append(append(buf[:0:MaxTermLen], s[:i]...), s[i+1:]...)
		out = append(out, variantHash(one))
		if depth < 2 {
			continue
		}
		for j := i; j < n-1; j++ {
			k := copy(two[:], one[:j])
			k += copy(two[k:], one[j+1:])
			out = append(out, variantHash(two[:k]))
		}
	}
	return out
}

// maxDeletions bounds deletionHashes' output: s itself, n single and
// n(n-1)/2 double deletions for n = MaxTermLen.
const maxDeletions = 1 + MaxTermLen + MaxTermLen*(MaxTermLen-1)/2

// Near calls fn for every term within maxDist edits of w (ASCII), each
// term once, with its distance; terms are those given to Build. w itself,
// if it is a term, is skipped: the caller has already looked it up
// exactly.
func (ix *Index) Near(w string, maxDist int, terms []string, fn func(term uint32, dist int)) {
	if len(ix.keys) == 0 || len(w) > MaxTermLen {
		return
	}
	var seen [64]uint32
	nseen := 0
	var store [maxDeletions]uint32
	for _, h := range deletionHashes(w, maxDist, store[:0]) {
		b := h >> ix.shift
		for i := ix.start[b]; i < ix.start[b+1]; i++ {
			if ix.keys[i] != uint16(h) {
				continue
			}
			t := ix.terms[i]
			if terms[t] == w || slices.Contains(seen[:nseen], t) {
				continue
			}
			if nseen < len(seen) {
				seen[nseen] = t
				nseen++
			}
			if d := Distance(w, terms[t]); d <= maxDist {
				fn(t, d)
			}
		}
	}
}
