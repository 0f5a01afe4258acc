package words

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The vectors load, and words of one topic are closer than words of
// different topics; an unknown word has none.
func TestWordVectors(t *testing.T) {
	id := func(w string) int32 {
		v := Vector(w)
		if v < 0 {
			t.Fatalf("no vector for %q", w)
		}
		return v
	}
	for _, c := range []struct{ a, near, far string }{
		{"bread", "dough", "mortgage"},
		{"espresso", "coffee", "telescope"},
		{"kayak", "canoe", "spreadsheet"},
	} {
		near, far := Cosine(id(c.a), id(c.near)), Cosine(id(c.a), id(c.far))
		if near <= far || near < 0.4 {
			t.Errorf("%s: %s %.2f, %s %.2f", c.a, c.near, near, c.far, far)
		}
	}
	if Vector("qzxvbnmw") >= 0 {
		t.Error("a made-up word has a vector")
	}
	if c := Cosine(id("bread"), id("bread")); c < 0.999 || c > 1.001 {
		t.Errorf("cosine of a word with itself: %v", c)
	}
}

// TestDotRows checks the assembly dot products against the Go loop on
// random rows, extremes included (-128·-128 in every dimension).
func TestDotRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dims := range []int{64, 50} {
		q := make([]int8, dims)
		rows := make([]int8, 37*dims)
		for i := range q {
			q[i] = int8(rng.IntN(256) - 128)
		}
		for i := range rows {
			rows[i] = int8(rng.IntN(256) - 128)
		}
		for i := range dims {
			rows[i] = -128 // row 0 against an all -128 query
		}
		q2 := slices.Repeat([]int8{-128}, dims)
		for _, q := range [][]int8{q, q2} {
			for _, n := range []int{0, 1, 2, 37} {
				got, want := make([]int32, n), make([]int32, n)
				DotRows(q, rows, got)
				dotRowsGo(q, rows, want)
				if !slices.Equal(got, want) {
					t.Fatalf("dims %d, %d rows: got %v, want %v", dims, n, got, want)
				}
			}
		}
	}
}
