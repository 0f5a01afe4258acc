package matcher

import (
	"slices"
	"testing"
)

// TestMatchMoreIsTwoMatchesWhenPruned: where the short ranking's
// accumulation stopped admitting categories (accumulate's pruning, which
// the evaluation registries' questions almost never reach), MatchMore still
// returns exactly what Match at its two limits returns: the long ranking
// accumulates again when the kept accumulation is not the one it would
// make, and reuses it when it is (equal candidate counts, or a short
// ranking that pruned where the long one's rank would too: wide).
func TestMatchMoreIsTwoMatchesWhenPruned(t *testing.T) {
	s := newSynth(11, 4_000)
	cats := s.categories(600)
	x := Build(cats)
	queries := s.queries(cats, 400)
	for i := range 60 {
		queries = append(queries, s.common[i%20]+" "+s.common[(i*7)%50], s.common[i%5]+" "+s.common[i%3])
	}
	pruned, wide := 0, 0
	for _, q := range queries {
		p, w := shortRankingPrunes(x, q, 5)
		if !p {
			continue
		}
		pruned++
		if w {
			wide++
		}
		for _, lim := range [][2]int{{5, 200}, {5, 5}, {5, 3}, {1, 8}, {5, 8}, {8, 5}} {
			wantHead, err := x.Match(q, lim[0])
			if err != nil {
				t.Fatal(err)
			}
			wantLong, err := x.Match(q, lim[1])
			if err != nil {
				t.Fatal(err)
			}
			head, long, err := x.MatchMore(q, lim[0], 2, lim[1]) // no head reaches 2: the long list always
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(head, wantHead) || !slices.Equal(long, wantLong) {
				t.Fatalf("%q at %v:\n head %v\n Match's %v\n long %v\n Match's %v", q, lim, head, wantHead, long, wantLong)
			}
		}
	}
	t.Logf("%d of %d questions pruned, %d of them wide", pruned, len(queries), wide)
	if pruned < 10 || wide < 10 || pruned-wide < 10 {
		t.Fatalf("%d of %d questions pruned, %d of them wide: the test proves too little", pruned, len(queries), wide)
	}
}

// shortRankingPrunes says whether ranking q at limit, as MatchMore's short
// ranking does, prunes its accumulation, and whether wide (keptWork).
func shortRankingPrunes(x *Index, q string, limit int) (pruned, wide bool) {
	p, err := x.parse(q)
	if err != nil {
		return false, false
	}
	s := newScratch(x.Len())
	s.keep = true
	x.rank(p, limit, s)
	defer s.release()
	return s.kept.ok && s.kept.pruned, s.kept.ok && s.kept.wide
}
