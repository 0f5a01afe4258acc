package bounded

import (
	"context"
	"testing"
	"time"
)

// The first round runs at once, a nudge starts the next one before the
// (hour-long) wait ends, and cancelling ctx ends the loop.
func TestRoundsNudgeAndCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := NewWake()
	ran := make(chan int)
	done := make(chan struct{})
	n := 0
	go func() {
		defer close(done)
		Rounds(ctx, w, func() time.Duration {
			n++
			ran <- n
			return time.Hour
		})
	}()
	if got := <-ran; got != 1 {
		t.Fatalf("first round: got %d", got)
	}
	w.Nudge()
	if got := <-ran; got != 2 {
		t.Fatalf("after a nudge: got round %d, want 2", got)
	}
	cancel()
	<-done
}

// Nudges made while one is pending count as one, and never block.
func TestNudgeNeverBlocks(t *testing.T) {
	w := NewWake()
	w.Nudge()
	w.Nudge()
	if len(w) != 1 {
		t.Fatalf("pending nudges: got %d, want 1", len(w))
	}
}
