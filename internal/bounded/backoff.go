package bounded

import (
	"math/rand/v2"
	"time"
)

// Backoff spaces the attempts of background work that keeps failing (a
// peer's fetch, an identity link's check): after the k-th failure in a
// row the wait is First, doubled k-1 times, at most Max. Retry adds the
// jitter every scheduled wait takes. The peer refresh and the identity
// checker each name theirs in units of their refresh interval.
type Backoff struct {
	First, Max time.Duration
}

// Wait is the wait after the k-th failure in a row (k >= 1), before
// jitter.
func (b Backoff) Wait(k int) time.Duration {
	d := b.First
	for i := 1; i < k && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// Retry is Wait(k), jittered.
func (b Backoff) Retry(k int) time.Duration { return Jitter(b.Wait(k)) }

// JitterFraction is how far Jitter moves a wait, either way: enough that
// servers started together, or links that failed together, drift apart.
const JitterFraction = 0.1

// Jitter moves d by up to JitterFraction of it either way, at random.
func Jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	return d + time.Duration((rand.Float64()*2-1)*JitterFraction*float64(d))
}

// The bounds of the wait between rounds that the Rounds loops of the peer
// refresh and the identity checker compute.
const (
	// MinRoundWait keeps a due time already past (or a clock set back)
	// from spinning a loop.
	MinRoundWait = 10 * time.Millisecond
	// MaxRoundWait makes a loop look again at least this often, so a
	// changed clock or list of subjects is noticed.
	MaxRoundWait = time.Minute
)
