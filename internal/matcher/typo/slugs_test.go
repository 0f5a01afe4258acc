package typo

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Slugs offers the slugs within reach of a mistyped one, closest first,
// in the given order among equals, and none out of reach.
func TestSlugs(t *testing.T) {
	slugs := []string{"rust-learning", "linux-hardening", "rust-lerning", "postgresql-performance", "go-learning"}
	for _, c := range []struct {
		typed string
		want  []string
	}{
		{"rust-learnig", []string{"rust-learning", "rust-lerning"}},
		{"linux-hardneing", []string{"linux-hardening"}},
		{"postgres-performance", []string{"postgresql-performance"}},
		{"sourdough", nil},
	} {
		if got := Slugs(c.typed, slugs); !slices.Equal(got, c.want) {
			t.Errorf("Slugs(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
}

// The bound that spares computing the edit distance to every slug never
// rules out a slug that is within reach: checked against the distance
// itself on slugs and their misspellings.
func TestSlugBoundNeverHidesANearSlug(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_."
	mutate := func(s string) string {
		b := []byte(s)
		for range 1 + rng.IntN(4) {
			switch i := rng.IntN(len(b) + 1); rng.IntN(4) {
			case 0:
				b = slices.Insert(b, i, alphabet[rng.IntN(len(alphabet))])
			case 1:
				if i < len(b) {
					b = slices.Delete(b, i, i+1)
				}
			case 2:
				if i < len(b) {
					b[i] = alphabet[rng.IntN(len(alphabet))]
				}
			default:
				if i+1 < len(b) {
					b[i], b[i+1] = b[i+1], b[i]
				}
			}
		}
		return string(b)
	}
	checked := 0
	for range 20000 {
		sl := mutate("postgresql-performance")
		sl = sl[:1+rng.IntN(len(sl))]
		typed := mutate(sl)
		most := max(2, len(sl)/4)
		want := letterCounts(typed)
		if d := Distance(typed, sl); d <= most {
			checked++
			if !mayBeWithin(&want, sl, most) {
				t.Fatalf("%q is %d edits from %q (at most %d allowed) but was ruled out", typed, d, sl, most)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d pairs within reach; the test checks too little", checked)
	}
}
