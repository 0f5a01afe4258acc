package pages

import (
	"testing"
	"time"
)

// TestWhen: the one place pages read dates takes them as the generated
// types hold them, strings now, time.Time perhaps later.
func TestWhen(t *testing.T) {
	s := "2026-11-21T11:09:07+01:00"
	tm := time.Date(2026, 11, 21, 10, 9, 7, 0, time.UTC)
	var nilString *string
	for _, c := range []struct {
		in   any
		want string
	}{
		{s, "2026-11-21 10:09 UTC"},
		{&s, "2026-11-21 10:09 UTC"},
		{tm, "2026-11-21 10:09 UTC"},
		{&tm, "2026-11-21 10:09 UTC"},
		{"soon", "soon"},
		{nilString, ""},
	} {
		if got := when(c.in); got != c.want {
			t.Errorf("when(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
