package words

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Word vectors (data/vectors.bin, written by lexgen from GloVe): a query
// word the registry lacks, and no dictionary relation links to it, can
// still be close in meaning to a word the curator wrote ("crumb" and
// "bread", "forearms" and "climbing"). Each of the 100,000 most frequent
// English words has a 64-dimensional direction, stored as int8.

//go:embed data/vectors.bin
var vectorData []byte

// vectors reads data/vectors.bin in place: the rows are an int8 view
// of the embedded bytes, never copied to the heap (on Linux a row is read
// from the executable file instead, the 64 bytes asked for: rowfile.go),
// and the words are found through a hash table of their ids, and where a
// word begins from its block's start and the lengths before it. The
// tables are all that is allocated (about 0.67 MB, against 20 MB for a
// map and a copy, mapped apart from the collector's heap: see table).
//
// The tables are kept small because they are most of a small registry's
// live heap, which the collector lets grow to twice itself: the open
// addressing table is filled to about three quarters, its slots carrying
// high bits of the word's hash beside the id so that a probe rarely
// compares a word, and norms are cached for the words in use rather than
// kept for all 100,000.
var vectors struct {
	once    sync.Once
	dims    int
	words   []byte   // the word list: each word ended by a NUL
	blocks  []uint32 // blocks[k] is where word k*wordBlock begins in words
	lens    []uint8  // lens[i] is the length of word i, NUL excluded
	slots   []uint32 // open addressing over the words' hashes: tag<<idBits | id+1, 0 for free
	idBits  uint     // low bits of a slot that hold id+1
	rows    []int8   // row i is word i's vector: a view of vectorData
	normTab []atomic.Uint64
}

// wordBlock is how many words share an entry of blocks: a word's start is
// its block's plus the lengths of the words before it in the block,
// which costs a few additions where a start per word cost 400 KB.
const wordBlock = 16

// word is the text of word id, in place.
func word(id uint32) []byte {
	v := &vectors
	off := v.blocks[id/wordBlock]
	for j := id &^ (wordBlock - 1); j < id; j++ {
		off += uint32(v.lens[j]) + 1
	}
	return v.words[off : off+uint32(v.lens[id])]
}

// normSlots is the size of the norm cache: direct-mapped, each entry
// id+1<<32 | the norm's float32 bits. A registry's words with vectors
// number a few hundred to a few thousand; a norm missed is recomputed
// from its 64 bytes.
const normSlots = 4096

func loadVectors() {
	v := &vectors
	data := vectorData
	const magic = "3GSVEC1\n"
	if !bytes.HasPrefix(data, []byte(magic)) || len(data) < len(magic)+8 {
		return // no vectors: semantics off, matching still works
	}
	data = data[len(magic):]
	n := int(binary.LittleEndian.Uint32(data))
	dims := int(binary.LittleEndian.Uint32(data[4:]))
	data = data[8:]
	idBits := uint(bits.Len(uint(n)))
	if idBits > 24 {
		return // more words than a slot can name: semantics off
	}
	blocks := table[uint32]((n + wordBlock - 1) / wordBlock)
	lens := table[uint8](n)
	off := 0
	for i := range n {
		if i%wordBlock == 0 {
			blocks[i/wordBlock] = uint32(off)
		}
		end := bytes.IndexByte(data[off:], 0)
		if end < 0 || end > math.MaxUint8 {
			return // truncated, or a word too long to be one: semantics off
		}
		lens[i] = uint8(end)
		off += end + 1
	}
	if len(data)-off < n*dims || n == 0 || dims == 0 {
		return
	}
	v.words, v.blocks, v.lens, v.dims = data[:off], blocks, lens, dims
	// Rows are read as int8 where they lie, or from the executable
	// (openRowFile); the embedded data is never written, so the view
	// stays valid for the life of the process. A copy would put 6.4 MB on
	// the heap (BenchmarkTablesHeap, rows-B), about five times all the
	// tables together.
	v.rows = unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(data[off:]))), n*dims)
	openRowFile(v.rows, dims)
	v.normTab = make([]atomic.Uint64, normSlots)
	v.idBits = idBits
	v.slots = table[uint32](denseTableSize(n))
	mask := uint32(len(v.slots) - 1)
	at := 0 // where word i begins
	for i := range n {
		h := Hash(v.words[at : at+int(lens[i])])
		at += int(lens[i]) + 1
		tag := h >> idBits << idBits
		for v.slots[h&mask] != 0 {
			h++
		}
		v.slots[h&mask] = tag | (uint32(i) + 1)
	}
}

// denseTableSize is the power of two that holds n entries at most four
// fifths full (for the 100,000 words, 131,072 slots: a hit then takes
// about 2.6 probes and a miss about 9, each a comparison of tags within
// a cache line or two).
func denseTableSize(n int) int {
	size := 1
	for size*4 < n*5 {
		size <<= 1
	}
	return size
}

// tableSize is the power of two at least twice n, so open-addressing
// probes stay short.
func tableSize(n int) int {
	size := 1
	for size < 2*n {
		size <<= 1
	}
	return size
}

// Hash is FNV-1a, for the in-place tables of words (and the matcher's
// caches of words).
func Hash[S string | []byte](s S) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// Vector is the id of word's vector, or -1.
func Vector(w string) int32 {
	v := &vectors
	v.once.Do(loadVectors)
	if len(v.slots) == 0 {
		return -1
	}
	mask := uint32(len(v.slots) - 1)
	h := Hash(w)
	idMask := uint32(1)<<v.idBits - 1
	tag := h &^ idMask
	for ; ; h++ {
		slot := v.slots[h&mask]
		if slot == 0 {
			return -1
		}
		if slot&^idMask != tag {
			continue
		}
		id := slot&idMask - 1
		if string(word(id)) == w {
			return int32(id)
		}
	}
}

// Norm is |row id|, from the cache when it is there. Concurrent queries
// may both compute it; they store the same value, atomically.
func Norm(id int32) float32 {
	v := &vectors
	e := &v.normTab[uint32(id)&(normSlots-1)]
	if c := e.Load(); c>>32 == uint64(id)+1 {
		return math.Float32frombits(uint32(c))
	}
	n := rowNorm(id)
	e.Store((uint64(id)+1)<<32 | uint64(math.Float32bits(n)))
	return n
}

// rowNorm computes |row id|.
func rowNorm(id int32) float32 { return NormOf(Row(id)) }

// NormOf is the norm of a row, as Norm gives it: an index computes its
// registry's words' norms from the rows it copied (AppendRow), so they
// are neither read again nor kept in the caches meant for the question's
// words.
func NormOf(row []int8) float32 {
	var s int32
	for _, x := range row {
		s += int32(x) * int32(x)
	}
	n := float32(math.Sqrt(float64(s)))
	if n == 0 {
		n = math.SmallestNonzeroFloat32 // a zero row: its cosines are 0
	}
	return n
}

// Cosine of the vectors a and b.
func Cosine(a, b int32) float32 {
	return float32(dot(Row(a), Row(b))) / (Norm(a) * Norm(b))
}

// CosineRow is Cosine(a, b) given b's row and norm (Norm(b)), as an index
// keeps them for its registry's words, so they need not be read again.
func CosineRow(a int32, row []int8, norm float32) float32 {
	return float32(dot(Row(a), row)) / (Norm(a) * norm)
}

// dot is the dot product of two rows, an exact integer.
func dot(ra, rb []int8) int32 {
	rb = rb[:len(ra)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(ra); i += 4 {
		s0 += int32(ra[i]) * int32(rb[i])
		s1 += int32(ra[i+1]) * int32(rb[i+1])
		s2 += int32(ra[i+2]) * int32(rb[i+2])
		s3 += int32(ra[i+3]) * int32(rb[i+3])
	}
	for ; i < len(ra); i++ {
		s0 += int32(ra[i]) * int32(rb[i])
	}
	return s0 + s1 + s2 + s3
}

// dotRowsGo is DotRows in Go, for other architectures and dimensions.
func dotRowsGo(q, rows []int8, out []int32) {
	for i := range out {
		out[i] = dot(q, rows[i*len(q):(i+1)*len(q)])
	}
}
