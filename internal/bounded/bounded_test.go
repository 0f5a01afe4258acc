package bounded

import (
	"runtime"
	"sync"
	"testing"
)

// Every item is seen once, and never more than limit calls run together.
func TestEachLimit(t *testing.T) {
	for _, limit := range []int{0, 1, 3} {
		items := make([]int, 50)
		for i := range items {
			items[i] = i
		}
		var mu sync.Mutex
		running, most := 0, 0
		seen := map[int]int{}
		Each(items, limit, func(i int) {
			mu.Lock()
			running++
			most = max(most, running)
			seen[i]++
			mu.Unlock()
			for range 100 { // give other calls the chance to overlap this one
				runtime.Gosched()
			}
			mu.Lock()
			running--
			mu.Unlock()
		})
		if len(seen) != len(items) {
			t.Errorf("limit %d: saw %d items, want %d", limit, len(seen), len(items))
		}
		for i, n := range seen {
			if n != 1 {
				t.Errorf("limit %d: item %d seen %d times", limit, i, n)
			}
		}
		if most > max(limit, 1) {
			t.Errorf("limit %d: %d calls ran at once", limit, most)
		}
	}
}
