package bounded

import (
	"testing"
	"time"
)

func TestBackoffDoublesToItsCap(t *testing.T) {
	b := Backoff{First: 15 * time.Minute, Max: 4 * time.Hour}
	want := []time.Duration{15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, 4 * time.Hour}
	for k, w := range want {
		if got := b.Wait(k + 1); got != w {
			t.Errorf("Wait(%d) = %s, want %s", k+1, got, w)
		}
	}
	if got := b.Wait(1 << 20); got != b.Max {
		t.Errorf("Wait(1<<20) = %s, want the cap", got)
	}
	for k := 1; k < 8; k++ {
		for range 100 {
			w := b.Wait(k)
			if got := b.Retry(k); got < w*9/10 || got > w*11/10 {
				t.Fatalf("Retry(%d) = %s, want %s ± a tenth", k, got, w)
			}
		}
	}
}

func TestJitterSpreads(t *testing.T) {
	if Jitter(0) != 0 || Jitter(-time.Second) != -time.Second {
		t.Error("Jitter moved a wait that is not positive")
	}
	lo, hi := time.Hour, time.Duration(0)
	for range 1000 {
		d := Jitter(10 * time.Second)
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo < 9*time.Second || hi > 11*time.Second || hi-lo < time.Second {
		t.Errorf("Jitter(10s) ranged over [%s, %s], want a spread within 9s–11s", lo, hi)
	}
}
