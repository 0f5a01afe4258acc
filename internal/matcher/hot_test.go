package matcher

import (
	"math/rand/v2"
	"testing"

	"github.com/hbollon/go-edlib"
)

// osaDistance must be edlib's distance exactly: typo candidates and their
// qualities depend on it.
func TestOSADistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := func() string {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = "abcde"[rng.IntN(5)]
		}
		return string(b)
	}
	pairs := [][2]string{{"teh", "the"}, {"ca", "abc"}, {"", "abc"}, {"rust", "rsut"}, {"héllo", "hello"}, {"kitten", "sitting"}}
	for range 20000 {
		pairs = append(pairs, [2]string{word(), word()})
	}
	for _, p := range pairs {
		if got, want := osaDistance(p[0], p[1]), edlib.OSADamerauLevenshteinDistance(p[0], p[1]); got != want {
			t.Fatalf("osaDistance(%q, %q) = %d, want %d", p[0], p[1], got, want)
		}
	}
}
