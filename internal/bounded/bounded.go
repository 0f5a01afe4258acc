// Package bounded runs one function over many items with a limit on how
// many run at once (Each), and background work in rounds that a nudge can
// bring forward (Rounds), with one retry schedule for what fails there
// (Backoff, Jitter): the peer refresh, the identity checker and doctor's
// peer fetches share it.
package bounded

import "sync"

// Each calls f on every item, at most limit calls at once (at least one),
// and returns when all have returned.
func Each[T any](items []T, limit int, f func(T)) {
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for _, it := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(it)
		})
	}
	wg.Wait()
}
