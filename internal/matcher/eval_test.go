package matcher

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// evalThreshold is the server's default threshold (tools.DefaultThreshold;
// not imported, as tools imports this package).
const evalThreshold = 0.4

type evalCase struct {
	line        int
	want, query string
}

func readEval(t testing.TB, path string) []evalCase {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []evalCase
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		want, query, ok := strings.Cut(line, "\t")
		if !ok || want == "" || strings.TrimSpace(query) == "" {
			t.Fatalf("%s:%d: want SLUG<TAB>QUERY, got %q", path, n, line)
		}
		out = append(out, evalCase{n, want, query})
	}
	return out
}

// evalResult counts how a matcher did on an evaluation set.
type evalResult struct {
	onTopic, onRight   int
	offTopic, offRight int
	misses             []string
}

func (r evalResult) onRate() float64  { return float64(r.onRight) / float64(r.onTopic) }
func (r evalResult) offRate() float64 { return float64(r.offRight) / float64(r.offTopic) }

func (r evalResult) String() string {
	return fmt.Sprintf("on-topic %d/%d right (%.1f%%), off-topic %d/%d rejected (%.1f%%)",
		r.onRight, r.onTopic, 100*r.onRate(), r.offRight, r.offTopic, 100*r.offRate())
}

func evaluate(t testing.TB, m Matcher, reg *registry.Registry, cases []evalCase) evalResult {
	var r evalResult
	for _, c := range cases {
		if c.want != "NONE" {
			if _, ok := reg.Category(c.want); !ok {
				t.Fatalf("line %d: no category %q in the registry", c.line, c.want)
			}
		}
		top, err := m.Match(c.query, 3)
		if err != nil {
			t.Fatalf("line %d: %q: %v", c.line, c.query, err)
		}
		got, score := "NONE", 0.0
		if len(top) > 0 {
			score = top[0].Score
			if score >= evalThreshold {
				got = top[0].Slug
			}
		}
		right := got == c.want
		if c.want == "NONE" {
			r.offTopic++
			if right {
				r.offRight++
			}
		} else {
			r.onTopic++
			if right {
				r.onRight++
			}
		}
		if !right {
			best := "nothing"
			if len(top) > 0 {
				best = fmt.Sprintf("%s %.3f", top[0].Slug, top[0].Score)
			}
			r.misses = append(r.misses, fmt.Sprintf("line %d: %q: want %s, best %s", c.line, c.query, c.want, best))
		}
	}
	return r
}

// The bars below are what the matcher reaches today, rounded down; a change
// that loses accuracy fails here. They count confident and right answers
// only; since the confidence was made to rest on the curator's own words
// (issue 32), the questions that name a product only a source mentions
// ("lynis", "esphome") are no longer confident, and come first in the
// no-match answer's list instead. The baseline's figures are logged for
// comparison.
func TestEvalOwnRegistry(t *testing.T) {
	reg, err := registry.Load(threegs.DefaultRegistry)
	if err != nil {
		t.Fatal(err)
	}
	runEval(t, reg, "testdata/eval.tsv", 0.92, 0.98)
}

// The same, on a registry curated by someone else, with our own queries:
// a check that the matcher is not fitted to our registry's writing style.
func TestEvalFixtureRegistry(t *testing.T) {
	reg, err := registry.LoadFile(testkit.SharedRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	runEval(t, reg, "testdata/eval-fixture.tsv", 0.92, 0.97)
}

func runEval(t *testing.T, reg *registry.Registry, path string, onBar, offBar float64) {
	cases := readEval(t, path)
	base := evaluate(t, NewBaseline(reg), reg, cases)
	t.Logf("baseline: %s", base)
	r := evaluate(t, New(reg), reg, cases)
	t.Logf("index:    %s", r)
	for _, m := range r.misses {
		t.Log(m)
	}
	if r.onRate() < onBar || r.offRate() < offBar {
		t.Errorf("below the bar of %.0f%% on-topic and %.0f%% off-topic: %s", 100*onBar, 100*offBar, r)
	}
}
