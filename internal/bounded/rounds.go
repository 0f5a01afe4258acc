package bounded

import (
	"context"
	"time"
)

// Wake tells a Rounds loop to start its next round now rather than when
// its wait ends. Nudges made while one is already pending count as one.
type Wake chan struct{}

// NewWake returns a Wake with room for one pending nudge.
func NewWake() Wake { return make(Wake, 1) }

// Nudge asks for a round now; it never blocks.
func (w Wake) Nudge() {
	select {
	case w <- struct{}{}:
	default:
	}
}

// Rounds calls round at once, then again after the wait round returns or
// sooner when w is nudged, until ctx ends. The peer refresh and the
// identity checker run their background work with it.
func Rounds(ctx context.Context, w Wake, round func() time.Duration) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-w:
		}
		timer.Reset(round())
	}
}
