package registry

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMergeRuns merges runs sorted apart, in the numbers of runs the
// cores of a machine make (one, two, an odd number, many), and gets the
// order one sort of the whole gives.
func TestMergeRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 2, 3, 5, 8} {
		s := make([]string, 1000+k)
		for i := range s {
			s[i] = fmt.Sprintf("slug-%d", rng.IntN(400)) // with repeats
		}
		want := slices.Sorted(slices.Values(s))
		var parts [][2]int
		for i := range k {
			parts = append(parts, [2]int{i * len(s) / k, (i + 1) * len(s) / k})
			slices.Sort(s[parts[i][0]:parts[i][1]])
		}
		if got := mergeRuns(s, parts); !slices.Equal(got, want) {
			t.Errorf("%d runs: merged out of order", k)
		}
	}
}
