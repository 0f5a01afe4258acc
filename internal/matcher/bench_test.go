package matcher

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// BenchmarkMatch is one get_sources match (the five candidates) on
// the fixture registry and on generated registries of growing size.
func BenchmarkMatch(b *testing.B) {
	b.Run("fixture", func(b *testing.B) {
		reg, err := registry.LoadFile(testkit.SharedRegistry(b))
		if err != nil {
			b.Fatal(err)
		}
		benchMatch(b, New(reg), []string{"how do I run a bitcoin full node", "self host my email server", "learn rust ownership", "harden ssh on linux", "keepass alternatives", "sysctl security", "postfix mail setup", "umbrel node"})
	})
	// The held-out evaluation: 32 categories and the natural questions
	// written for them, long ones included (the 40-category case).
	b.Run("heldout-32", func(b *testing.B) {
		reg, err := registry.LoadFile("testdata/heldout/registry.json")
		if err != nil {
			b.Fatal(err)
		}
		var queries []string
		for _, c := range readShaped(b, "testdata/heldout/queries.tsv") {
			queries = append(queries, c.query)
		}
		benchMatch(b, New(reg), queries)
	})
	// The benchmark mix (evalset.MixV1), its typos, long questions and
	// nonsense included, on the dev registry; baseline-mix-v1 is the old
	// matcher on it.
	mixReg, mixQuestions := readMix(b)
	b.Run("mix-v1", func(b *testing.B) { benchMatch(b, New(mixReg), mixQuestions) })
	b.Run("baseline-mix-v1", func(b *testing.B) { benchMatch(b, NewBaseline(mixReg), mixQuestions) })
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := newSynth(1, n+20_000)
			cats := s.categories(n)
			benchMatch(b, Build(cats), s.queries(cats, 512))
		})
	}
}

// readMix is the benchmark mix's registry and questions.
func readMix(b testing.TB) (*registry.Registry, []string) {
	mix := evalset.MixV1("../..")
	reg, err := registry.LoadFile(mix.Registry)
	if err != nil {
		b.Fatal(err)
	}
	questions, err := mix.Questions()
	if err != nil {
		b.Fatal(err)
	}
	return reg, questions
}

// BenchmarkBaselineScaling is the old matcher on the same generated
// registries, for comparison.
func BenchmarkBaselineScaling(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := newSynth(1, n+20_000)
			cats := s.categories(n)
			benchMatch(b, BuildBaseline(cats), s.queries(cats, 512))
		})
	}
}

// benchMatch times matches over queries and also reports the median and
// 99th percentile of single calls (p50-ns, p99-ns): the mean hides the
// long questions behind the short ones.
func benchMatch(b *testing.B, m Matcher, queries []string) {
	b.ReportAllocs()
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		// A question of stop words alone is refused: an answer too.
		if _, err := m.Match(queries[i%len(queries)], 5); err != nil && !errors.Is(err, ErrOnlyStopWords) {
			b.Fatal(err)
		}
		if len(took) < 1<<20 {
			took = append(took, time.Since(start))
		}
		i++
	}
	slices.Sort(took)
	if n := len(took); n > 0 {
		b.ReportMetric(float64(took[n/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(took[n*99/100].Nanoseconds()), "p99-ns")
	}
}

// BenchmarkBuild is building the index at load; it reports the heap the
// index keeps per category (after a GC, excluding the categories).
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			cats := newSynth(1, n+20_000).categories(n)
			var x *Index
			for b.Loop() {
				x = Build(cats)
			}
			b.StopTimer()
			x = nil
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			x = Build(cats)
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "B/category")
			b.ReportMetric(float64(x.Terms()), "terms")
			runtime.KeepAlive(x)
		})
	}
}
