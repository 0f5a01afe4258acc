package tools

import (
	"slices"
	"strings"
	"testing"
)

// describedNear, the listing of an answer that points at the catalog in
// the session's instructions, chooses the same described categories, in
// the same order, as the whole listing (listNear) would, at every room
// size, and counts exactly the bytes of their lines: it only stops
// before choosing the others.
func TestDescribedNearIsListNearsDescribed(t *testing.T) {
	for _, a := range answerSets(t) {
		s := handlers(t, a.reg).cur.Load()
		m := s.matcher
		compared := 0
		for _, q := range a.qs {
			ranked, confident, err := matchFor(m, len(s.slugs), q, DefaultThreshold)
			if err != nil || confident {
				continue
			}
			shelves := []shelf{{reg: s.reg, ranked: ranked, visible: s.visible, lineBytes: s.lineBytes, index: s.index}}
			for _, room := range []int{answerBudget, 1500, 400, 0} {
				got, want := describedNear(shelves, room), listNear(shelves, room, true)
				if !slices.EqualFunc(got.described, want.described, func(a, b listed) bool {
					return a.slug == b.slug && a.score == b.score && a.near == b.near && a.name == b.name && a.desc == b.desc
				}) || got.near != want.near {
					t.Fatalf("%s: %q, room %d: described %v, listNear's %v", a.name, q, room, got.described, want.described)
				}
				var b strings.Builder
				got.writeDescribedLines(&b)
				if len(got.more) != 0 || b.Len() != got.describedSize {
					t.Fatalf("%s: %q, room %d: %d more, lines of %d bytes counted as %d", a.name, q, room, len(got.more), b.Len(), got.describedSize)
				}
				compared++
			}
		}
		if compared == 0 {
			t.Fatalf("%s: no question was not confident", a.name)
		}
	}
}
