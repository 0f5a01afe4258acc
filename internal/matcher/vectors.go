package matcher

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"math"
	"sync"
)

// Word vectors (data/vectors.bin, written by lexgen from GloVe): a query
// word the registry lacks, and no dictionary relation links to it, can
// still be close in meaning to a word the curator wrote ("crumb" and
// "bread", "forearms" and "climbing"). Each of the 100,000 most frequent
// English words has a 64-dimensional direction, stored as int8.

//go:embed data/vectors.bin
var vectorData []byte

var wordVectors struct {
	once  sync.Once
	ids   map[string]int32
	dims  int
	rows  []int8    // row i is word i's vector
	norms []float32 // |row i|
}

func loadVectors() {
	v := &wordVectors
	data := vectorData
	const magic = "3GSVEC1\n"
	if !bytes.HasPrefix(data, []byte(magic)) || len(data) < len(magic)+8 {
		v.ids = map[string]int32{} // no vectors: semantics off, matching still works
		return
	}
	data = data[len(magic):]
	n := int(binary.LittleEndian.Uint32(data))
	v.dims = int(binary.LittleEndian.Uint32(data[4:]))
	data = data[8:]
	v.ids = make(map[string]int32, n)
	for i := range n {
		end := bytes.IndexByte(data, 0)
		v.ids[string(data[:end])] = int32(i)
		data = data[end+1:]
	}
	v.rows = make([]int8, n*v.dims)
	for i := range v.rows {
		v.rows[i] = int8(data[i])
	}
	v.norms = make([]float32, n)
	for i := range n {
		var s int32
		for _, x := range v.rows[i*v.dims : (i+1)*v.dims] {
			s += int32(x) * int32(x)
		}
		v.norms[i] = float32(math.Sqrt(float64(s)))
	}
}

// vectorOf is the id of word's vector, or -1.
func vectorOf(word string) int32 {
	wordVectors.once.Do(loadVectors)
	if id, ok := wordVectors.ids[word]; ok {
		return id
	}
	return -1
}

// cosine of the vectors a and b.
func cosine(a, b int32) float32 {
	v := &wordVectors
	ra := v.rows[int(a)*v.dims : int(a+1)*v.dims]
	rb := v.rows[int(b)*v.dims : int(b+1)*v.dims]
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
	return float32(s0+s1+s2+s3) / (v.norms[a] * v.norms[b])
}

// maxSimTerms: past this many registry terms with vectors, comparing
// every query word with all of them would cost more than a match may; such
// registries match without word vectors.
const maxSimTerms = 30_000

// The semantic channel. Coverage needs the asker's words, or their
// dictionary relatives, to be the curator's; a paraphrase ("my wild yeast
// jar stopped bubbling") shares almost none. For registries small enough to
// compare every query word with every curated word (semAllCats), each
// category also gets a semantic score: for each query word, its closest
// curated word of that category by word vectors (cosine above
// semAlignFloor, rescaled to 0..1; description words count descWeight),
// averaged with SIF weights (semSIF/(semSIF+p), p the word's frequency), so
// ordinary words count little. blend keeps what exceeds the registry's
// mean (in a registry all about software every category is somewhat close
// to "compiler") and adds semWeight of it, times what the lexical score
// leaves to 1, to the categories that are not confident answers.
const (
	semAllCats    = 4096
	semAlignFloor = 0.3
	semSIF        = 3e-5
	descWeight    = 0.8
	semWeight     = 0.5
)

// sifWeight is how much a query word counts in the semantic score.
func sifWeight(raw string) float32 {
	z, ok := zipfOf(raw)
	if !ok {
		return 1
	}
	p := math.Pow(10, float64(z)-9)
	return float32(semSIF / (semSIF + p))
}

// semantic fills s.sem for the categories some query word is close to and
// lists them in s.semTouched, and reports whether it ran: it does nothing
// for a large registry. Each query word is compared with every curated
// word that has a vector: a few hundred in a registry of forty categories.
func (x *Index) semantic(p *parsed, s *scratch) bool {
	if len(x.simTerms) == 0 || len(x.slugs) > semAllCats {
		return false
	}
	var weights [maxQueryWords]float32
	var den float32
	for i, w := range p.words {
		if !isGeneric(w.stem) {
			weights[i] = sifWeight(w.raw)
			den += weights[i]
		}
	}
	if den == 0 {
		return true
	}
	for i, w := range p.words {
		if weights[i] == 0 {
			continue // generic
		}
		q := vectorOf(w.raw)
		if q < 0 {
			continue
		}
		wt := weights[i] / den
		for i, vid := range x.simVecs {
			c := cosine(q, vid)
			if c <= semAlignFloor {
				continue
			}
			v := (c - semAlignFloor) / (1 - semAlignFloor)
			cats, masks := x.postings(x.simTerms[i])
			for k, cat := range cats {
				m := masks[k]
				if m&curatedFields == 0 {
					continue
				}
				val := v
				if m&keyFields == 0 {
					val *= descWeight
				}
				if val > s.semNow[cat] {
					if s.semNow[cat] == 0 {
						s.semWord = append(s.semWord, cat)
					}
					s.semNow[cat] = val
				}
			}
		}
		for _, cat := range s.semWord {
			if s.sem[cat] == 0 {
				s.semTouched = append(s.semTouched, cat)
			}
			s.sem[cat] += wt * s.semNow[cat]
			s.semNow[cat] = 0
		}
		s.semWord = s.semWord[:0]
	}
	return true
}
