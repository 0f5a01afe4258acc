package typo

import (
	"math/rand/v2"
	"testing"
)

// Known distances, worked out by hand.
func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"rust", "rust", 0},
		{"teh", "the", 1},   // a swap of neighbours is one edit
		{"rust", "rsut", 1}, // ... anywhere in the word
		{"ca", "abc", 3},    // optimal string alignment: no edit of a swapped pair
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"héllo", "hello", 1}, // runes, not bytes
		{"naïve", "naive", 1},
		{"kubernetes", "kubrenetes", 1},
		{"kubernetes", "kubernets", 1},
		{"postgresql", "postgersql", 1},
		{"abcdef", "badcfe", 3},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// Distance is symmetric, zero exactly for equal words, at least the
// difference in length and at most the longer length, counts a swap of
// neighbours as one edit, and obeys the triangle inequality within one
// edit (the alignment distance is not a metric: "ca", "ac", "abc"), on
// random words over a small alphabet where these cases are common. The
// ASCII path on the stack agrees with the rune path it stands in for.
func TestDistanceProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := func() string {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = "abcde"[rng.IntN(5)]
		}
		return string(b)
	}
	for range 20000 {
		a, b, c := word(), word(), word()
		d := Distance(a, b)
		if r := table([]rune(a), []rune(b), true, nil); r != d {
			t.Fatalf("Distance(%q, %q) = %d on the stack, %d by runes", a, b, d, r)
		}
		if back := Distance(b, a); back != d {
			t.Fatalf("Distance(%q, %q) = %d but %d the other way", a, b, d, back)
		}
		if (d == 0) != (a == b) {
			t.Fatalf("Distance(%q, %q) = %d", a, b, d)
		}
		if d < abs(len(a)-len(b)) || d > max(len(a), len(b)) {
			t.Fatalf("Distance(%q, %q) = %d, outside [%d, %d]", a, b, d, abs(len(a)-len(b)), max(len(a), len(b)))
		}
		if via := Distance(a, c) + Distance(c, b); d > via+1 {
			t.Fatalf("Distance(%q, %q) = %d, but %d through %q", a, b, d, via, c)
		}
		if len(a) >= 2 {
			i := rng.IntN(len(a) - 1)
			if a[i] != a[i+1] {
				s := []byte(a)
				s[i], s[i+1] = s[i+1], s[i]
				if got := Distance(a, string(s)); got != 1 {
					t.Fatalf("Distance(%q, %q) = %d, want 1 for a swap", a, s, got)
				}
			}
		}
	}
}

// Words longer than the stack's rows take the rune path, with the same
// answer as for their ASCII prefix plus the edits past it.
func TestDistanceLongWords(t *testing.T) {
	long := make([]byte, 100)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	a := string(long)
	b := a[:50] + "X" + a[51:] + "yz"
	if got := Distance(a, b); got != 3 {
		t.Fatalf("Distance of 100-letter words a substitution and two insertions apart = %d, want 3", got)
	}
}

// Levenshtein counts a swap as two edits, unlike Distance.
func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"teh", "the", 2},
		{"kitten", "sitting", 3},
		{"héllo", "hello", 1},
		{"ca", "abc", 3},
	} {
		if got := Levenshtein([]rune(c.a), []rune(c.b)); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func FuzzDistance(f *testing.F) {
	f.Add("teh", "the")
	f.Add("héllo", "hello")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := Distance(a, b)
		if d != Distance(b, a) || (d == 0) != (string([]rune(a)) == string([]rune(b))) {
			t.Fatalf("Distance(%q, %q) = %d, %d the other way", a, b, d, Distance(b, a))
		}
		if l := Levenshtein([]rune(a), []rune(b)); d > l || l > 2*d {
			t.Fatalf("Distance(%q, %q) = %d, Levenshtein %d", a, b, d, l)
		}
	})
}

// Short ASCII words are compared on the stack: the matcher's typo
// tolerance calls Distance for every candidate term.
func TestDistanceShortASCIIAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { Distance("kubernetes", "kuberentes") }); n != 0 {
		t.Errorf("Distance of two ASCII words allocated %v times, want 0", n)
	}
}
