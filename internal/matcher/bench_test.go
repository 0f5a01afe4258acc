package matcher

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/three-good-sources/3gs/internal/fixture"
	"github.com/three-good-sources/3gs/internal/registry"
)

// BenchmarkMatch is one get_sources match (best plus two alternatives) on
// the fixture registry and on generated registries of growing size.
func BenchmarkMatch(b *testing.B) {
	b.Run("fixture", func(b *testing.B) {
		reg, err := registry.LoadFile(fixture.SharedRegistry(b))
		if err != nil {
			b.Fatal(err)
		}
		benchMatch(b, New(reg), []string{"how do I run a bitcoin full node", "self host my email server", "learn rust ownership", "harden ssh on linux", "keepass alternatives", "sysctl security", "postfix mail setup", "umbrel node"})
	})
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := newSynth(1, n+20_000)
			cats := s.categories(n)
			benchMatch(b, Build(cats), s.queries(cats, 512))
		})
	}
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

func benchMatch(b *testing.B, m Matcher, queries []string) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := m.Match(queries[i%len(queries)], 3); err != nil {
			b.Fatal(err)
		}
		i++
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
