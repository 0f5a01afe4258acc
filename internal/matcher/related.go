package matcher

import "slices"

// relatedTable is what relatedTerms found, laid out flat and looked up
// without a map: stem i is text[stemEnd[i-1]:stemEnd[i]] (from 0 for
// the first), its terms cands[candEnd[i-1]:candEnd[i]], and slots an
// open-addressing table over the stems' termHash holding i + 1 (0 is a
// free slot). Nothing in it but text holds a pointer. As a map of
// strings to slices it took 1.08 MB of the heap on the benchmark mix's
// registry (9,284 stems, 26,843 links), 426 KB so
// (BenchmarkRelatedTerms).
type relatedTable struct {
	text    string
	stemEnd []uint32
	candEnd []uint32
	cands   []cand
	slots   []uint32
}

// find is the terms related to stem st (nil when none). The slice is the
// table's own, never to be written.
func (r *relatedTable) find(st string) []cand {
	if len(r.slots) == 0 {
		return nil
	}
	mask := uint32(len(r.slots) - 1)
	for h := termHash(st) & mask; ; h = (h + 1) & mask {
		v := r.slots[h]
		if v == 0 {
			return nil
		}
		if i := v - 1; r.stem(i) == st {
			lo := uint32(0)
			if i > 0 {
				lo = r.candEnd[i-1]
			}
			return r.cands[lo:r.candEnd[i]:r.candEnd[i]]
		}
	}
}

// stem is stem i.
func (r *relatedTable) stem(i uint32) string {
	lo := uint32(0)
	if i > 0 {
		lo = r.stemEnd[i-1]
	}
	return r.text[lo:r.stemEnd[i]]
}

// len is the number of stems.
func (r *relatedTable) len() int { return len(r.stemEnd) }

// relatedBuilder gathers a relatedTable's stems: add a stem with its
// first terms, then append any more to cands before the next add.
type relatedBuilder struct {
	text    []byte
	stemEnd []uint32
	candEnd []uint32
	cands   []cand
}

func (b *relatedBuilder) add(stem string, cands []cand) {
	if len(b.stemEnd) > 0 {
		b.candEnd = append(b.candEnd, uint32(len(b.cands)))
	}
	b.text = append(b.text, stem...)
	b.stemEnd = append(b.stemEnd, uint32(len(b.text)))
	b.cands = append(b.cands, cands...)
}

// table ends the last stem and indexes them; stems are distinct.
func (b *relatedBuilder) table() relatedTable {
	if len(b.stemEnd) == 0 {
		return relatedTable{}
	}
	b.candEnd = append(b.candEnd, uint32(len(b.cands)))
	// Copied at their length: grown by append, they held up to twice it.
	r := relatedTable{text: string(b.text), stemEnd: slices.Clone(b.stemEnd), candEnd: slices.Clone(b.candEnd), cands: slices.Clone(b.cands)}
	n := 4
	for n < len(r.stemEnd)+len(r.stemEnd)/2+1 {
		n *= 2
	}
	r.slots = make([]uint32, n)
	mask := uint32(n - 1)
	for i := range r.stemEnd {
		h := termHash(r.stem(uint32(i))) & mask
		for r.slots[h] != 0 {
			h = (h + 1) & mask
		}
		r.slots[h] = uint32(i) + 1
	}
	return r
}
