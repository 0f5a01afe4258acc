package words

import (
	"runtime"
	"sync"
	"testing"
)

// BenchmarkTablesHeap measures the two memory devices of this package
// (figures in offheap.go and vectors.go): the heap that loading the
// lexicon and the word vectors leaves live with the tables mapped apart
// from the heap (mapped, as shipped) and made on it (heap), and the bytes
// of rows a copy of the vectors, rather than the int8 view of the
// embedded data, would add to either (rows-B). The collector lets the
// heap grow to twice what is live, so a server peaks about twice the
// difference higher. Each sub-benchmark loads twice, once to measure
// (a mapping is never given back, so it is not run in a loop).
func BenchmarkTablesHeap(b *testing.B) {
	load := func() {
		lexicon.once, vectors.once = sync.Once{}, sync.Once{}
		Vector("the")
		Zipf("the")
	}
	live := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	for _, onHeap := range []bool{false, true} {
		name := "mapped"
		if onHeap {
			name = "heap"
		}
		b.Run(name, func(b *testing.B) {
			defer func() { heapTables = false }()
			heapTables = false
			load() // the tables any earlier load left on the heap go
			before := live()
			heapTables = onHeap
			load()
			grew := live() - before
			for b.Loop() {
			}
			b.ReportMetric(0, "ns/op") // one load, not timed
			b.ReportMetric(float64(grew), "heap-B")
			b.ReportMetric(float64(len(vectors.rows)), "rows-B")
		})
	}
}
