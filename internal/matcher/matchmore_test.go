package matcher_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
)

// TestMatchMoreIsTwoMatches: MatchMore returns exactly what Match at its
// two limits returns, for every question of the evaluation sets and the
// benchmark mix on their registries, at the limits get_sources asks for
// (5, then the whole of a small registry or 200), and at a few more (a
// long limit below the short one among them), at
// thresholds some, none and every head falls below; the long list only
// when the head has nothing at the threshold.
func TestMatchMoreIsTwoMatches(t *testing.T) {
	sets := append(evalset.Sets("../.."), evalset.MixV1("../.."))
	for _, set := range sets {
		reg, err := registry.LoadFile(set.Registry)
		if err != nil {
			t.Fatal(err)
		}
		qs, err := set.Questions()
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, "", "how do I", "zzqx vorpal", "learn rust ownership")
		m := matcher.New(reg)
		n := len(reg.Categories())
		for _, q := range qs {
			for _, lim := range [][2]int{{5, min(n, 200)}, {5, 3}, {1, 8}, {8, 5}, {5, 0}} {
				for _, threshold := range []float64{0.4, 0, 2} {
					wantHead, wantErr := m.Match(q, lim[0])
					var wantLong []matcher.Scored
					if lim[1] > 0 && wantErr == nil && (len(wantHead) == 0 || wantHead[0].Score < threshold) {
						wantLong, _ = m.Match(q, lim[1])
					}
					head, long, err := m.MatchMore(q, lim[0], threshold, lim[1])
					what := fmt.Sprintf("%s: %q at %v, threshold %v", set.Name, q, lim, threshold)
					switch {
					case (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error():
						t.Fatalf("%s: error %v, Match's %v", what, err, wantErr)
					case err != nil:
						if head != nil || long != nil {
							t.Fatalf("%s: lists with an error", what)
						}
					case !slices.Equal(head, wantHead):
						t.Fatalf("%s: head %v, Match's %v", what, head, wantHead)
					case !slices.Equal(long, wantLong):
						t.Fatalf("%s: long %v, Match's %v", what, long, wantLong)
					}
				}
			}
		}
	}
}

// BenchmarkMatchMore is what MatchMore saves a not-confident get_sources
// answer: the benchmark mix's questions that are not confident, ranked at
// 5 and then at the whole registry, by two Match calls and by MatchMore.
func BenchmarkMatchMore(b *testing.B) {
	set := evalset.MixV1("../..")
	reg, err := registry.LoadFile(set.Registry)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := set.Questions()
	if err != nil {
		b.Fatal(err)
	}
	m := matcher.New(reg)
	n := len(reg.Categories())
	var unsure []string
	for _, q := range qs {
		if got, err := m.Match(q, 5); err == nil && (len(got) == 0 || got[0].Score < 0.4) {
			unsure = append(unsure, q)
		}
	}
	b.Run("two-matches", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			q := unsure[i%len(unsure)]
			m.Match(q, 5)
			m.Match(q, n)
		}
	})
	b.Run("match-more", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			m.MatchMore(unsure[i%len(unsure)], 5, 0.4, n)
		}
	})
}
