package fetch

import (
	"context"
	"sync"
)

// budget is a semaphore of bytes: the body bytes every fetch in flight
// holds together stay within total. Waiters are served in order, so a
// large body is not passed over for ever by small ones.
type budget struct {
	mu      sync.Mutex
	total   int64
	used    int64
	waiters []*waiter
}

type waiter struct {
	n     int64
	ready chan struct{}
}

func newBudget(total int64) *budget {
	if total <= 0 {
		total = 64 << 20
	}
	return &budget{total: total}
}

// clamp is n, or the whole budget when n is more: a single body larger
// than the budget may still be read, alone.
func (b *budget) clamp(n int64) int64 { return min(n, b.total) }

// acquire takes n bytes (at most total; see clamp), waiting for them
// until ctx ends.
func (b *budget) acquire(ctx context.Context, n int64) error {
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.total {
		b.used += n
		b.mu.Unlock()
		return nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	select {
	case <-w.ready:
		// Granted while giving up: hand the bytes back.
		b.mu.Unlock()
		b.release(n)
		return ctx.Err()
	default:
	}
	for i, x := range b.waiters {
		if x == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			break
		}
	}
	// The one leaving may have been the first in line, holding back
	// those after it.
	b.grant()
	b.mu.Unlock()
	return ctx.Err()
}

// release gives back n bytes.
func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.grant()
	b.mu.Unlock()
}

// grant lets in the waiters, in order, while there is room. b.mu is held.
func (b *budget) grant() {
	for len(b.waiters) > 0 && b.used+b.waiters[0].n <= b.total {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.used += w.n
		close(w.ready)
	}
}

// inUse is the bytes held now, for tests.
func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// waiting is the number of waiters, for tests.
func (b *budget) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}
