package typo

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/three-good-sources/3gs/internal/matcher/words"
)

// englishList is the ordinary English word list as the matcher indexes
// it (matcher.englishTypoOf): words of four letters or more.
func englishList() ([]string, []bool) {
	list := words.ByFrequency()
	long := make([]bool, len(list))
	for i, w := range list {
		long[i] = len(w) >= 4
	}
	return list, long
}

// referenceBuild is Build as it was first written, each entry appended to
// growing arrays: the index Build must make, entry for entry.
func referenceBuild(terms []string, words []bool) Index {
	var hashes, owners, own []uint32
	for id, t := range terms {
		n := len(t)
		if !words[id] || n < MinTermLen || n > MaxTermLen || !ascii(t) {
			continue
		}
		depth := 1
		if n >= TwoDeletionLen && n <= MaxTwoDeletionLen {
			depth = 2
		}
		own = deletionHashes(t, depth, own[:0])
		slices.Sort(own)
		for _, h := range slices.Compact(own) {
			hashes = append(hashes, h)
			owners = append(owners, uint32(id))
		}
	}
	bits := uint(1)
	for 8<<bits < len(hashes) && bits < 30 {
		bits++
	}
	ix := Index{shift: 32 - bits, start: make([]uint32, 1<<bits+1), keys: make([]uint16, len(hashes)), terms: make([]uint32, len(hashes))}
	for _, h := range hashes {
		ix.start[h>>ix.shift+1]++
	}
	for b := 1; b < len(ix.start); b++ {
		ix.start[b] += ix.start[b-1]
	}
	next := slices.Clone(ix.start[:len(ix.start)-1])
	for i, h := range hashes {
		b := h >> ix.shift
		ix.keys[next[b]], ix.terms[next[b]] = uint16(h), owners[i]
		next[b]++
	}
	return ix
}

// entryTerms is the term of each entry of ix, whichever width it is
// stored in.
func entryTerms(ix Index) []uint32 {
	out := make([]uint32, len(ix.keys))
	for i := range out {
		out[i] = ix.term(uint32(i))
	}
	return out
}

// TestBuildWide: an index of more than 1<<16 terms numbers them in 32
// bits, and finds the terms past 1<<16; with one term fewer, in 16.
func TestBuildWide(t *testing.T) {
	terms := make([]string, narrowTerms+1)
	marked := make([]bool, len(terms))
	for i := range terms {
		terms[i] = fmt.Sprintf("w%05dx", i)
		marked[i] = true
	}
	ix := Build(terms, marked)
	if ix.terms == nil || ix.narrow != nil {
		t.Fatalf("%d terms: not numbered in 32 bits", len(terms))
	}
	if !slices.Equal(entryTerms(ix), entryTerms(referenceBuild(terms, marked))) {
		t.Error("wide index differs from the reference")
	}
	last := uint32(narrowTerms)
	found := false
	ix.Near("w65536y", 1, terms, func(u uint32, _ int) { found = found || u == last })
	if !found {
		t.Errorf("Near does not find term %d, %q", last, terms[last])
	}
	if got, ok := Load(string(ix.AppendBinary(nil))); !ok || !slices.Equal(got.terms, ix.terms) || !slices.Equal(got.keys8, low8(ix.keys)) || got.keys != nil || got.narrow != nil {
		t.Errorf("wide index: Load(AppendBinary) is not the index written (ok %v)", ok)
	}
	if narrow := Build(terms[:narrowTerms], marked[:narrowTerms]); narrow.narrow == nil {
		t.Errorf("%d terms: not numbered in 16 bits", narrowTerms)
	}
}

func ascii(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestBuildIsReference: Build makes the same index, entry for entry, as
// the reference, for the English word list and for terms of every length
// and depth, some left out.
func TestBuildIsReference(t *testing.T) {
	list, long := englishList()
	extra := []string{"ab", "abc", "rust", "bitcoin", "mailinabox", "kubernetes", "abcdefghijklm", "naïve", "aaaaaaaa", string(make([]byte, 40))}
	list = append(slices.Clone(list), extra...)
	long = append(slices.Clone(long), true, true, false, true, true, true, true, true, true, true)
	got, want := Build(list, long), referenceBuild(list, long)
	if got.narrow == nil {
		t.Error("an index of fewer than 1<<16 terms numbers them in 32 bits")
	}
	if got.shift != want.shift || !slices.Equal(got.start, want.start) || !slices.Equal(got.keys, want.keys) || !slices.Equal(entryTerms(got), entryTerms(want)) {
		t.Fatalf("Build's index differs from the reference: %d entries against %d", len(got.keys), len(want.keys))
	}
	if len(got.keys) == 0 {
		t.Fatal("empty index")
	}
}

// TestBuildAllocates: indexing the English word list allocates at most
// its entries gathered once (8 bytes each) and what the index keeps (its
// entries sorted into place, 4 bytes each with 16-bit term numbers, and
// the bucket starts), with a tenth to spare: 9.5 MB for 3.2 MB. Growing
// arrays made it 38.8 MB, a burst a server's peak RSS showed on the
// first misspelt question.
func TestBuildAllocates(t *testing.T) {
	list, long := englishList()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix := Build(list, long)
	runtime.ReadMemStats(&after)
	kept := ix.Size()
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("index %.1f MB, allocated %.1f MB to build it", float64(kept)/1e6, float64(allocated)/1e6)
	if allocated > uint64(8*len(ix.keys)+kept)*11/10 {
		t.Errorf("allocated %d bytes to build an index of %d", allocated, kept)
	}
}

// BenchmarkBuild builds the English word list's index.
func BenchmarkBuild(b *testing.B) {
	list, long := englishList()
	b.ReportAllocs()
	for b.Loop() {
		Build(list, long)
	}
}

// TestLoad: an index written by AppendBinary loads back to the same
// arrays, whether the data is aligned (read in place) or not (copied),
// and data that is not a whole index is refused.
func TestLoad(t *testing.T) {
	list, long := englishList()
	ix := Build(list, long)
	data := ix.AppendBinary(nil)
	same := func(got Index) bool {
		return got.shift == ix.shift && slices.Equal(got.start, ix.start) && got.keys == nil && slices.Equal(got.keys8, low8(ix.keys)) && slices.Equal(got.terms, ix.terms) && slices.Equal(got.narrow, ix.narrow)
	}
	got, ok := Load(string(data))
	if !ok || !same(got) {
		t.Fatalf("Load(AppendBinary) = %v, ok %v: not the index written", got.shift, ok)
	}
	shifted := string(append([]byte{0}, data...))[1:] // most likely unaligned
	if got, ok := Load(shifted); !ok || !same(got) {
		t.Fatalf("Load of unaligned data: ok %v, not the index written", ok)
	}
	bad := map[string]string{
		"empty":       "",
		"truncated":   string(data[:len(data)-2]),
		"longer":      string(append(slices.Clone(data), 0, 0)),
		"header":      string(data[:headerLen]),
		"magic":       string(append([]byte{'x'}, data[1:]...)),
		"version":     string(append(append(slices.Clone(data[:4]), 9, 0, 0, 0), data[8:]...)),
		"first":       string(append(append(slices.Clone(data[:headerLen]), 1, 0, 0, 0), data[headerLen+4:]...)),
		"empty index": string(new(Index).AppendBinary(nil)),
	}
	for name, d := range bad {
		if _, ok := Load(d); ok {
			t.Errorf("%s: loaded", name)
		}
	}
}

// TestVariantHashFixed: the hash is the same in every process and on
// every machine, as an index built once and shipped requires.
func TestVariantHashFixed(t *testing.T) {
	for _, c := range []struct {
		s    string
		want uint32
	}{{"", 0}, {"rut", 0x5fb244d1}, {"rust", 0x2585c8d8}, {"bitcoin", 0x661a3ce4}, {"kubernetes", 0x8053f335}, {"abcdefghijklmnop", 0x9116d5d4}} {
		if got := variantHash([]byte(c.s)); got != c.want {
			t.Errorf("variantHash(%q) = %#x, want %#x", c.s, got, c.want)
		}
	}
}

// low8 is the low 8 bits of each key, as AppendBinary writes them.
func low8(keys []uint16) []uint8 {
	out := make([]uint8, len(keys))
	for i, k := range keys {
		out[i] = uint8(k)
	}
	return out
}
