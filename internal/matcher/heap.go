package matcher

import "slices"

// The heaps ranking keeps its best candidates in.

// qcand is a category with the upper bound of its score, as top orders
// the categories worth scoring.
type qcand struct {
	cat uint32
	q   float32
}

// best keeps the k best items offered, the worst of them on top
// (items[0]), so a newcomer is compared with one item. items must have
// room for k. It is the one heap
// ranking uses: for the categories worth scoring by their upper bounds,
// and for the results by their scores. Generic rather than
// container/heap, whose interface boxing would allocate per push.
type best[T any] struct {
	items []T
	k     int
	worse func(a, b T) bool // a ranks below b
}

func (h *best[T]) full() bool { return len(h.items) >= h.k }

// offer adds v, and returns what no longer fits, if anything: v itself,
// or the item it displaced.
func (h *best[T]) offer(v T) (dropped T, ok bool) {
	if !h.full() {
		// Within the capacity the caller gave (at least k): append
		// would make escape analysis move that storage to the heap.
		h.items = h.items[:len(h.items)+1]
		h.items[len(h.items)-1] = v
		for i := len(h.items) - 1; i > 0; { // sift up
			parent := (i - 1) / 2
			if !h.worse(h.items[i], h.items[parent]) {
				break
			}
			h.items[i], h.items[parent] = h.items[parent], h.items[i]
			i = parent
		}
		return dropped, false
	}
	if h.k == 0 || !h.worse(h.items[0], v) {
		return v, true
	}
	dropped, h.items[0] = h.items[0], v
	for i := 0; ; { // sift down
		l := 2*i + 1
		if l >= len(h.items) {
			break
		}
		m := l
		if r := l + 1; r < len(h.items) && h.worse(h.items[r], h.items[l]) {
			m = r
		}
		if !h.worse(h.items[m], h.items[i]) {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return dropped, true
}

// hitHeap is best[hit] ordered by byScore, written out so that the
// comparison is a direct call: through best's func field, escape analysis
// must assume the hits escape, and its storage moves to the heap.
//
// Until k items are offered it only collects them, and orders them as a
// heap once it is full, by the steps sifting each up on arrival would
// have taken: nothing reads the worst kept before then, and a
// long list (MatchMore's, k the whole registry) that never fills the heap
// no longer sifts each 160-byte hit up on arrival (BenchmarkHitHeap).
type hitHeap struct {
	items []hit
	k     int
}

func (h *hitHeap) full() bool { return len(h.items) >= h.k }

func hitWorse(a, b *hit) bool { return byScore(a.Scored, b.Scored) > 0 }

// offer adds v if it ranks among the k best, as best.offer does. Once the
// heap is full, items[0] is the worst of them.
func (h *hitHeap) offer(v hit) {
	if !h.full() {
		// Within the capacity the caller gave (at least k): append
		// would make escape analysis move that storage to the heap.
		h.items = h.items[:len(h.items)+1]
		h.items[len(h.items)-1] = v
		if h.full() {
			// The heap eager sifting would have built, by the same
			// steps: each item sifted up among those before it.
			for j := 1; j < len(h.items); j++ {
				for i := j; i > 0; {
					parent := (i - 1) / 2
					if !hitWorse(&h.items[i], &h.items[parent]) {
						break
					}
					h.items[i], h.items[parent] = h.items[parent], h.items[i]
					i = parent
				}
			}
		}
		return
	}
	if h.k == 0 || !hitWorse(&h.items[0], &v) {
		return
	}
	h.items[0] = v
	for i := 0; ; { // sift down
		l := 2*i + 1
		if l >= len(h.items) {
			break
		}
		m := l
		if r := l + 1; r < len(h.items) && hitWorse(&h.items[r], &h.items[l]) {
			m = r
		}
		if !hitWorse(&h.items[m], &h.items[i]) {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

// sortHits sorts hits by byHitScore, a total order (slugs are unique), so
// the result is the one slices.SortFunc(hits, byHitScore) gives. A hit is
// 160 bytes: sorting them in place copied two per comparison and moved
// them at every swap, a twelfth of a not-confident get_sources answer
// (BenchmarkSortHits). Their positions are sorted instead, and each hit
// then moves once, through s's buffer.
func sortHits(hits []hit, s *scratch) {
	sorted := true
	for i := 1; i < len(hits) && sorted; i++ {
		sorted = cmpHits(&hits[i-1], &hits[i]) <= 0
	}
	if sorted {
		return
	}
	order := s.order[:0]
	for i := range hits {
		order = append(order, int32(i))
	}
	slices.SortFunc(order, func(a, b int32) int { return cmpHits(&hits[a], &hits[b]) })
	buf := append(s.sortBuf[:0], hits...)
	for i, j := range order {
		hits[i] = buf[j]
	}
	s.order, s.sortBuf = order, buf[:0]
}

// cmpHits is byHitScore through pointers.
func cmpHits(x, y *hit) int { return cmpScored(&x.Scored, &y.Scored) }
