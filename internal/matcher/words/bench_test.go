package words

import (
	"sync"
	"testing"
)

// BenchmarkWordLookup compares finding a word's vector through the
// in-place open-addressing table (Vector) with a map[string]int32 of
// the same words, which is what loading used to build: the table costs no
// map and no copy of the words, and should not be slower to read.
func BenchmarkWordLookup(b *testing.B) {
	list := []string{"the", "bread", "sourdough", "kubernetes", "harden", "qzxvbnmw", "ownership", "climbing"}
	Vector("the")
	b.Run("table", func(b *testing.B) {
		i := 0
		for b.Loop() {
			Vector(list[i%len(list)])
			i++
		}
	})
	b.Run("map", func(b *testing.B) {
		v := &vectors
		ids := make(map[string]int32, len(v.lens))
		for id := range len(v.lens) {
			ids[string(word(uint32(id)))] = int32(id)
		}
		b.ResetTimer()
		i := 0
		for b.Loop() {
			_ = ids[list[i%len(list)]]
			i++
		}
	})
	b.Run("load", func(b *testing.B) {
		heapTables = true // each load maps tables never unmapped otherwise
		defer func() { heapTables = false }()
		for b.Loop() {
			vectors.once = sync.Once{}
			Vector("the")
		}
	})
}
