package matcher

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/internal/matcher/typo"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

func ownRegistry(t testing.TB) *registry.Registry {
	reg, err := registry.Load(threegs.DefaultRegistry)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// registries are ours and, where ../shared exists, the fixture.
func registries(t *testing.T) map[string]*registry.Registry {
	out := map[string]*registry.Registry{"own": ownRegistry(t)}
	path, ok := testkit.SharedRegistryPath()
	if !ok {
		t.Logf("checking our registry only: the shared fixture %s is not present", path)
		return out
	}
	reg, err := registry.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out["fixture"] = reg
	return out
}

// evidenceOf is the ranking evidence (the score before calibration) of
// the best category for q.
func evidenceOf(t *testing.T, x *Index, q string) (string, float64) {
	t.Helper()
	p, err := x.parse(q)
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	hits, _ := x.candidates(p, 1)
	if len(hits) == 0 {
		return "", 0
	}
	return hits[0].Slug, hits[0].Score
}

// A query that is one of a category's own phrases is a near-exact match:
// its evidence is at least 0.95, and the category comes first with a
// confidence at or above the default threshold: it is an answer (the
// model counts a wrong answer eight times a missed right one, so it is
// sparing with high scores, and "Learning Go" explains one word, "go").
func TestOwnPhrasesScoreNearOne(t *testing.T) {
	for name, reg := range registries(t) {
		x := New(reg)
		for _, c := range reg.Categories() {
			for _, p := range append([]string{c.Name}, c.QueryPatterns...) {
				top, err := x.Match(p, 1)
				if err != nil || len(top) == 0 || top[0].Slug != c.Slug || top[0].Score < evalThreshold {
					t.Errorf("%s: %q: got %v %v, want %s at %v or more", name, p, top, err, c.Slug, evalThreshold)
				}
				if slug, ev := evidenceOf(t, x, p); slug != c.Slug || ev < 0.95 {
					t.Errorf("%s: %q: evidence %s %.3f, want %s at 0.95 or more", name, p, slug, ev, c.Slug)
				}
			}
		}
	}
}

// A typo keeps the match, confidently, but costs evidence: a misspelled
// phrase is never a near-exact match.
func TestTypoKeepsMatchButLowersScore(t *testing.T) {
	for name, reg := range registries(t) {
		x := New(reg)
		for _, c := range reg.Categories() {
			for _, p := range c.QueryPatterns {
				typo, ok := transposeLongest(p)
				if !ok {
					continue
				}
				// A typo costs in proportion to the word's weight, so a
				// typo in "exlpained" or a word every category has costs
				// little by design; a typo in a word that carries a third
				// of the query must leave the near-exact range.
				near := 1.01
				if share := typoShare(x, typo); share >= 1.0/3 {
					near = 0.95
				}
				top, err := x.Match(typo, 1)
				if err != nil || len(top) == 0 || top[0].Slug != c.Slug || top[0].Score < 0.4 {
					t.Errorf("%s: %q (from %q): got %v %v, want %s at 0.4 or more", name, typo, p, top, err, c.Slug)
				}
				_, clean := evidenceOf(t, x, p)
				slug, ev := evidenceOf(t, x, typo)
				if slug != c.Slug || ev >= clean || ev >= near {
					t.Errorf("%s: %q (from %q): evidence %s %.3f, want %s below min(%.2f, %.3f)", name, typo, p, slug, ev, c.Slug, near, clean)
				}
			}
		}
	}
}

// typoShare is the weight share of the query words matched by typo.
func typoShare(x *Index, q string) float64 {
	p, err := x.parse(q)
	if err != nil {
		return 0
	}
	var w float32
	for _, word := range p.words {
		if word.kind == KindTypo {
			w += word.weight
		}
	}
	return float64(w / p.total)
}

// transposeLongest swaps the 3rd and 4th letters of the phrase's longest
// word, if it has 7 letters or more.
func transposeLongest(p string) (string, bool) {
	words := strings.Fields(p)
	i := 0
	for j, w := range words {
		if len(w) > len(words[i]) {
			i = j
		}
	}
	w := []byte(words[i])
	if len(w) < 7 || w[2] == w[3] {
		return "", false
	}
	w[2], w[3] = w[3], w[2]
	words[i] = string(w)
	return strings.Join(words, " "), true
}

func TestQueryErrorsFollowTextnorm(t *testing.T) {
	x := New(ownRegistry(t))
	for _, q := range []string{"", "   ", "\t\n"} {
		if _, err := x.Match(q, 3); !errors.Is(err, ErrEmptyQuery) {
			t.Errorf("%q: %v, want ErrEmptyQuery", q, err)
		}
	}
	for _, q := range []string{"how do I do it?", "the", "!!!", "and/or"} {
		if _, err := x.Match(q, 3); !errors.Is(err, ErrOnlyStopWords) {
			t.Errorf("%q: %v, want ErrOnlyStopWords", q, err)
		}
	}
	// Words nobody wrote about match nothing at all.
	if top, err := x.Match("zzqx wqxxz", 3); err != nil || len(top) != 0 {
		t.Errorf("unknown words: %v %v, want no categories", top, err)
	}
}

// Ranking prunes twice (skipping common postings, scoring phrases only
// where a bound allows); the evidence it ranks by must equal scoring every
// touched category. (Calibration then only rescales what ranking found.)
func TestPrunedTopEqualsExhaustive(t *testing.T) {
	t.Parallel() // seconds of work that shares nothing with the other tests
	s := newSynth(7, 25_000)
	cats := s.categories(5_000)
	x := Build(cats)
	// -short checks a twentieth of the topic queries and a tenth of the
	// common-word ones: each is scored exhaustively against 5,000
	// categories, once, and ranked with three limits. The full run keeps them all.
	n, common := 400, 100
	if testing.Short() {
		n, common = 20, 10
	}
	queries := s.queries(cats, n)
	// Common words, alone and with topic words: the hard cases for pruning.
	for i := range common {
		queries = append(queries, s.common[i%20]+" "+s.common[(i*7)%50], s.common[i%5])
	}
	approximate := 0
	for _, q := range queries {
		p, err := x.parse(q)
		if err != nil {
			t.Fatal(err)
		}
		// One exhaustive scoring per query serves the three limits.
		all := exhaustive(x, q)
		for _, limit := range []int{1, 3, 5} {
			hits, _ := x.candidates(p, limit)
			var got []Scored
			for _, h := range hits[:min(limit, len(hits))] {
				got = append(got, h.Scored)
			}
			want, ties := all.top(limit)
			if len(got) != len(want) {
				t.Fatalf("%q limit %d: got %d results, want %d", q, limit, len(got), len(want))
			}
			if !slices.Equal(got, want) {
				if ties > maxFinish {
					approximate++
					// Crowded: any of the tied categories is as good an
					// answer, but none may beat the exhaustive one.
					if got[len(got)-1].Score > want[len(want)-1].Score+1e-9 {
						t.Fatalf("%q: approximate answer %v beats exhaustive %v", q, got, want)
					}
					continue
				}
				t.Fatalf("%q limit %d:\n got  %v\n want %v", q, limit, got, want)
			}
		}
	}
	t.Logf("%d of %d answers fell back to the documented tie approximation", approximate, 3*len(queries))
	if approximate > len(queries)/5 {
		t.Errorf("too many approximate answers: %d", approximate)
	}
}

// exhaustive scores every category that shares a term with q, best
// first by evidence.
func exhaustive(x *Index, q string) *ranking {
	p, err := x.parse(q)
	if err != nil || p.total == 0 {
		return &ranking{}
	}
	r := &ranking{x: x, p: p, s: newScratch(x.Len()), inv: 1 / p.total}
	x.accumulate(p, r.s, -1) // never pruned
	for _, c := range r.s.touched {
		f := x.finish(p, c, r.s.acc[c]*r.inv, nil, nil)
		r.hits = append(r.hits, hit{Scored: Scored{Slug: x.slugs[c], Score: roundScore(f.score)}, cat: c})
	}
	slices.SortFunc(r.hits, func(a, b hit) int { return byScore(a.Scored, b.Scored) })
	return r
}

// ranking is every touched category of one query, scored and sorted.
type ranking struct {
	x    *Index
	p    *parsed
	s    *scratch
	inv  float32
	hits []hit
}

// top returns the limit best by evidence, and how many categories could
// have reached the last.
func (r *ranking) top(limit int) ([]Scored, int) {
	var all []Scored
	for _, h := range r.hits[:min(limit, len(r.hits))] {
		all = append(all, h.Scored)
	}
	ties := 0
	if len(all) > 0 {
		last := all[len(all)-1].Score
		for _, c := range r.s.touched {
			if float64(r.x.upperBound(r.p, min(r.s.acc[c]*r.inv, 1), r.s.matched[c]*r.inv, r.s.share[c])) >= last-1e-6 {
				ties++
			}
		}
	}
	return all, ties
}

// Building with several workers gives exactly the index one worker builds.
func TestParallelBuildEqualsSerial(t *testing.T) {
	cats := newSynth(3, 30_000).categories(3 * minCategoriesPerWorker)
	parallel := Build(cats)
	old := runtime.GOMAXPROCS(1)
	serial := Build(cats)
	runtime.GOMAXPROCS(old)
	if !slices.Equal(parallel.terms, serial.terms) || !slices.Equal(parallel.postCat, serial.postCat) ||
		!slices.Equal(parallel.postMask, serial.postMask) || !slices.Equal(parallel.postStart, serial.postStart) ||
		!slices.Equal(parallel.elems, serial.elems) || !slices.Equal(parallel.elemStart, serial.elemStart) ||
		!slices.Equal(parallel.weight, serial.weight) || !reflect.DeepEqual(parallel.typos, serial.typos) {
		t.Fatal("parallel and serial builds differ")
	}
}

// The typo index finds every term within the documented distance.
func TestTypoIndexFindsEveryNearTerm(t *testing.T) {
	t.Parallel() // seconds of work that shares nothing with the other tests
	x := Build(newSynth(5, 3_000).categories(500))
	rng := rand.New(rand.NewPCG(9, 9))
	rounds := 2000
	if testing.Short() {
		rounds = 200 // each round compares one query with every term
	}
	for range rounds {
		w := []byte(x.terms[rng.IntN(len(x.terms))])
		if len(w) < 4 || len(w) > typo.MaxTermLen {
			continue
		}
		for range 1 + rng.IntN(2) { // one or two random edits
			i := rng.IntN(len(w))
			switch rng.IntN(3) {
			case 0:
				w[i] = byte('a' + rng.IntN(26))
			case 1:
				w = append(w[:i], w[i+1:]...)
			default:
				w = append(w[:i], append([]byte{byte('a' + rng.IntN(26))}, w[i:]...)...)
			}
		}
		q := string(w)
		maxDist := 1
		if len(q) >= twoTypoLen {
			maxDist = 2
		}
		found := map[uint32]int{}
		x.typos.Near(q, maxDist, x.terms, func(t uint32, d int) { found[t] = d })
		for id, term := range x.terms {
			if abs(len(term)-len(q)) > maxDist {
				continue // a length apart by more than maxDist is more than maxDist edits away
			}
			d := typo.Distance(q, term)
			indexed := len(term) >= typo.MinTermLen && len(term) <= typo.MaxTermLen
			covered := d <= 1 || d == 2 && len(term) >= typo.TwoDeletionLen && len(term) <= typo.MaxTwoDeletionLen
			if term == q || d > maxDist || !indexed || !covered || !typoIndexed(x, uint32(id)) {
				continue
			}
			if got, ok := found[uint32(id)]; !ok || got != d {
				t.Fatalf("%q: term %q at distance %d not found (got %v)", q, term, d, found)
			}
		}
	}
}

// typoIndexed reports whether term t is in the typo index at all (joined
// compounds are left out on purpose).
func typoIndexed(x *Index, t uint32) bool {
	found := false
	x.typos.Near(x.terms[t]+"q", 1, x.terms, func(u uint32, _ int) { found = found || u == t })
	return found
}

func TestConcurrentMatchesAgree(t *testing.T) {
	x := New(ownRegistry(t))
	queries := []string{"learn rust", "postfix mail setup", "kubernets tutorial", "regex", "harden my server", "gardening"}
	want := map[string][]Scored{}
	for _, q := range queries {
		want[q], _ = x.Match(q, 3)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				q := queries[(g+i)%len(queries)]
				if got, _ := x.Match(q, 3); !slices.Equal(got, want[q]) {
					t.Errorf("%q: %v, want %v", q, got, want[q])
					return
				}
			}
		})
	}
	wg.Wait()
}

// Explain tells the same score Match gives, and its parts add up.
func TestExplainAgreesWithMatch(t *testing.T) {
	x := New(ownRegistry(t))
	for _, q := range []string{"postfix mail setup", "kubernets tutorial", "keepass alternatives", "rust and go programming"} {
		top, _ := x.Match(q, 5)
		ex, err := x.Explain(q, 5)
		if err != nil || len(ex) != len(top) {
			t.Fatalf("%q: %d explanations, %v; want %d", q, len(ex), err, len(top))
		}
		for i, e := range ex {
			if e.Slug != top[i].Slug || math.Abs(e.Score-top[i].Score) > 1e-6 {
				t.Errorf("%q #%d: explained %s %.6f, matched %s %.6f", q, i, e.Slug, e.Score, top[i].Slug, top[i].Score)
			}
			var byWord, byField float64
			for _, w := range e.Words {
				byWord += w.Contribution
			}
			for _, f := range e.Fields {
				byField += f
			}
			if math.Abs(byWord-byField) > 1e-6 || e.Coverage > byWord+1e-6 {
				t.Errorf("%q %s: words add to %.4f, fields to %.4f, coverage %.4f", q, e.Slug, byWord, byField, e.Coverage)
			}
		}
	}
}

func FuzzMatch(f *testing.F) {
	for _, q := range []string{"learn rust", "postfix mail setup", "k8s", "a11y", "", "the", "mailserver", "kubernets", "ÄÖÜ straße", "selfhosted e-mail", strings.Repeat("rust ", 120)} {
		f.Add(q)
	}
	x := New(ownRegistry(f))
	f.Fuzz(func(t *testing.T, q string) {
		top, err := x.Match(q, 3)
		switch {
		case strings.TrimSpace(q) == "":
			if !errors.Is(err, ErrEmptyQuery) {
				t.Fatalf("blank %q: %v", q, err)
			}
			return
		case len(textnorm.Tokens(q)) == 0:
			if !errors.Is(err, ErrOnlyStopWords) {
				t.Fatalf("%q has no words but got %v", q, err)
			}
			return
		case err != nil:
			t.Fatalf("%q: %v", q, err)
		}
		if len(top) > 3 || !slices.IsSortedFunc(top, byScore) {
			t.Fatalf("%q: %v", q, top)
		}
		for _, s := range top {
			if !(s.Score > 0 && s.Score <= 1) {
				t.Fatalf("%q: score %v out of (0, 1]", q, s)
			}
		}
	})
}

// postingFinder finds what posting finds, for categories in ascending
// order from any start, terms repeated and absent included.
func TestPostingFinder(t *testing.T) {
	x := Build(newSynth(4, 20_000).categories(3000))
	for _, from := range []uint32{0, 1, 1234} {
		f := postingFinder{x: x, from: from, at: make([]uint32, len(x.terms))}
		for c := from; c < uint32(x.Len()); c++ {
			for elem := range x.elements(c) {
				for _, term := range append(elem[1:], elem[1:]...) {
					for _, tt := range []uint32{term, (term * 7919) % uint32(len(x.terms))} {
						gk, gok := f.posting(tt, c)
						wk, wok := x.posting(tt, c)
						if gok != wok || gok && gk != wk {
							t.Fatalf("from %d: term %d category %d: finder %d %v, posting %d %v", from, tt, c, gk, gok, wk, wok)
						}
					}
				}
			}
		}
	}
}
