package matcher_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
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

// BenchmarkMatchMoreLarge is MatchMore as a not-confident get_sources
// answer calls it (5, then 200) on generated registries of 1,000, 10,000
// and 100,000 categories (registrytest, as bench/report's scale section
// serves them), over those of the question and the registry's
// generated ones that ask for the long list. It reports the median and
// 99th percentile of single calls (p50-ns, p99-ns): the slowest of these
// questions are those of common words, which the mean hides.
func BenchmarkMatchMoreLarge(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("generated-%d", n), func(b *testing.B) {
			doc := registrytest.Generate(n, 1)
			reg, err := registry.LoadLimit(gen.EncodeRegistry(doc), 1<<30)
			if err != nil {
				b.Fatal(err)
			}
			m := matcher.New(reg)
			var unsure []string
			for _, q := range append([]string{"learn rust ownership"}, registrytest.Queries(doc, 256, 1)...) {
				if _, long, err := m.MatchMore(q, 5, 0.4, 200); err == nil && long != nil {
					unsure = append(unsure, q)
				}
			}
			b.ReportAllocs()
			took := make([]time.Duration, 0, 1<<16)
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				m.MatchMore(unsure[i%len(unsure)], 5, 0.4, 200)
				if len(took) < cap(took) {
					took = append(took, time.Since(start))
				}
			}
			slices.Sort(took)
			if k := len(took); k > 0 {
				b.ReportMetric(float64(took[k/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(took[k*99/100].Nanoseconds()), "p99-ns")
			}
		})
	}
}
