package typo

import (
	"encoding/binary"
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
//
// The hash is fixed (variantHash), not seeded per process, so an index
// can be built once and shipped: AppendBinary writes it and Load reads it
// back in place, which is how the matcher's index over the English word
// list comes embedded in the binary rather than built at the first
// misspelt question.
type Index struct {
	// Entries are bucketed by the top bits of their hash (a counting sort,
	// so building is linear): bucket b is keys[start[b]:start[b+1]].
	shift uint
	start []uint32
	keys  []uint16 // low 16 bits of the variant's hash; the bucket holds the top bits
	// keys8 replaces keys in an index Load read: the low 8 bits only,
	// which AppendBinary writes (see there).
	keys8 []uint8
	// The term stored under keys[i] is narrow[i] where there are at
	// most 1<<16 terms (the English word list's 27,612, most
	// registries'), terms[i] otherwise: 4 bytes an entry instead of 6.
	terms  []uint32
	narrow []uint16
}

// narrowTerms is the most terms an index numbers in 16 bits.
const narrowTerms = 1 << 16

// term is the term stored under keys[i].
func (ix *Index) term(i uint32) uint32 {
	if ix.narrow != nil {
		return uint32(ix.narrow[i])
	}
	return ix.terms[i]
}

// Size is the bytes the index's arrays take.
func (ix *Index) Size() int {
	return 4*len(ix.start) + 2*len(ix.keys) + len(ix.keys8) + 4*len(ix.terms) + 2*len(ix.narrow)
}

const (
	MinTermLen        = 3  // shortest stored term
	TwoDeletionLen    = 7  // terms this long are stored with two deletions
	MaxTwoDeletionLen = 12 // ... up to this length
	MaxTermLen        = 32 // longer terms are not words anyone misspells
)

// variantHash is a fixed 32-bit hash of a deletion variant: 8 bytes at a
// time multiplied and folded (as wyhash and its kin do), the same on every
// machine and in every process, so that a built index can be stored. Its
// quality only matters for speed: a collision adds a candidate the
// distance check drops. BenchmarkBuild measures it against the seeded
// maphash it replaced: the English word list's index took 43 ms with
// maphash and takes 41 with this (same run, 2 cores).
func variantHash(v []byte) uint32 {
	const m1, m2 = 0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9
	n := len(v)
	h := uint64(n) * m1
	var tail uint64
	switch {
	case n >= 8:
		for i := 0; i < n-8; i += 8 {
			h = (h ^ binary.LittleEndian.Uint64(v[i:])) * m2
			h ^= h >> 29
		}
		// The last 8 bytes, overlapping the chunk before if n is not a
		// multiple of 8.
		tail = binary.LittleEndian.Uint64(v[n-8:])
	case n >= 4:
		tail = uint64(binary.LittleEndian.Uint32(v)) | uint64(binary.LittleEndian.Uint32(v[n-4:]))<<32
	case n > 0:
		tail = uint64(v[0]) | uint64(v[n/2])<<8 | uint64(v[n-1])<<16
	}
	h = (h ^ tail) * m2
	h ^= h >> 32
	h *= m1
	return uint32(h >> 32)
}

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
	ix := Index{shift: 32 - bits, start: make([]uint32, 1<<bits+1), keys: make([]uint16, len(entries))}
	if len(terms) <= narrowTerms {
		ix.narrow = make([]uint16, len(entries))
	} else {
		ix.terms = make([]uint32, len(entries))
	}
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
		ix.keys[next[b]] = uint16(h)
		if ix.narrow != nil {
			ix.narrow[next[b]] = uint16(e)
		} else {
			ix.terms[next[b]] = uint32(e)
		}
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
	ix.NearFunc(w, maxDist, func(t uint32) string { return terms[t] }, fn)
}

// NearFunc is Near for terms not held in a slice: term(t) is term t as
// given to Build. The English word list is read where it lies in the
// embedded text (words.FrequencyWord), not copied out into 27,612 string
// headers (432 KB the collector kept live and paced itself by).
func (ix *Index) NearFunc(w string, maxDist int, term func(uint32) string, fn func(term uint32, dist int)) {
	if ix.keys8 != nil {
		nearFunc(ix, ix.keys8, w, maxDist, term, fn)
		return
	}
	nearFunc(ix, ix.keys, w, maxDist, term, fn)
}

// nearFunc is NearFunc over keys, ix.keys or ix.keys8.
func nearFunc[K uint8 | uint16](ix *Index, keys []K, w string, maxDist int, term func(uint32) string, fn func(term uint32, dist int)) {
	if len(keys) == 0 || len(w) > MaxTermLen {
		return
	}
	var seen [64]uint32
	nseen := 0
	var store [maxDeletions]uint32
	for _, h := range deletionHashes(w, maxDist, store[:0]) {
		b := h >> ix.shift
		for i := ix.start[b]; i < ix.start[b+1]; i++ {
			if keys[i] != K(h) {
				continue
			}
			t := ix.term(i)
			tw := term(t)
			if tw == w || slices.Contains(seen[:nseen], t) {
				continue
			}
			if nseen < len(seen) {
				seen[nseen] = t
				nseen++
			}
			if d := Distance(w, tw); d <= maxDist {
				fn(t, d)
			}
		}
	}
}

// The binary form of an Index (AppendBinary, Load): a header of six
// little-endian uint32s (binaryMagic, the format's version, shift, the
// lengths of start and of keys, and the bytes of a term number, 2 or 4),
// then start as uint32s, the term numbers, and the low 8 bits of the keys,
// all little-endian and each array aligned to its numbers' size where the
// data is.
//
// 8 bits of key, not Build's 16: the matcher's English index is loaded
// in place and a misspelt question reads most of it, so all of it is
// resident in a server (fault-around), and the narrower keys make it
// 2.6 MB instead of 3.3. A key that agrees by chance only adds a
// candidate the distance check drops, about one in 256 entries of a
// bucket (about 8) per deletion looked up; but it may also report a term
// that is near at an earlier deletion than its own, so Near on a loaded
// index may report the terms in another order than on the index written:
// it is for callers whose answer does not depend on the order, as the
// English index's (the nearest, the most common among equals).
const (
	binaryMagic   = 0x54736733 // "3gsT"
	binaryVersion = 3
	headerLen     = 6 * 4
)

// AppendBinary appends ix in its binary form to b.
func (ix *Index) AppendBinary(b []byte) []byte {
	width := uint32(4)
	if ix.narrow != nil || len(ix.keys)+len(ix.keys8) == 0 {
		width = 2
	}
	for _, v := range [...]uint32{binaryMagic, binaryVersion, uint32(ix.shift), uint32(len(ix.start)), uint32(len(ix.keys) + len(ix.keys8)), width} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	for _, v := range ix.start {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	for _, v := range ix.terms {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	for _, v := range ix.narrow {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	for _, v := range ix.keys {
		b = append(b, uint8(v))
	}
	b = append(b, ix.keys8...)
	return b
}

// Load reads an index AppendBinary wrote. Where the machine is
// little-endian and data is 4-byte aligned (an embedded file is), the
// index's arrays are data itself, so an index embedded in the binary
// takes no heap and is paged in only where Near looks; elsewhere they
// are copied out. Its keys are the 8 bits written (keys8). data must not
// change while the index is used. ok is false if data is not a
// well-formed index.
func Load(data string) (ix Index, ok bool) {
	if len(data) < headerLen {
		return Index{}, false
	}
	word := func(i int) uint32 { return binary.LittleEndian.Uint32([]byte(data[4*i : 4*i+4])) }
	if word(0) != binaryMagic || word(1) != binaryVersion {
		return Index{}, false
	}
	shift, nstart, nkeys, width := word(2), int(word(3)), int(word(4)), int(word(5))
	if shift < 2 || shift > 31 || nstart != 1<<(32-shift)+1 || width != 2 && width != 4 || len(data) != headerLen+4*nstart+(width+1)*nkeys {
		return Index{}, false
	}
	body := data[headerLen:]
	ix = Index{shift: uint(shift)}
	ix.start = view[uint32](body[:4*nstart])
	body = body[4*nstart:]
	if width == 2 {
		ix.narrow = view[uint16](body[:2*nkeys])
	} else {
		ix.terms = view[uint32](body[:4*nkeys])
	}
	ix.keys8 = view[uint8](body[width*nkeys:])
	// A corrupt start would send Near out of its arrays.
	if ix.start[0] != 0 || int(ix.start[nstart-1]) != nkeys || !slices.IsSorted(ix.start) {
		return Index{}, false
	}
	return ix, true
}
