package tools

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
)

// What the agent sees. An agent reads meaning better than the matcher: in
// our trial a language model, shown exactly what get_sources returned,
// chose the right category whenever it was visible and declined every
// question no category answers. So the first answer is judged by what its
// text puts in front of the agent:
//
//   - confident and right, confident and wrong (the one mistake a less
//     careful agent passes on), and for questions no category answers,
//     answered with confidence;
//   - right in the first answer: confident and right, or not confident
//     with the right category's slug in the text;
//   - the text's size, which the agent pays for on every call.
//
// The sets are internal/matcher/testdata's (see evalset), and a registry of
// 1,000 categories built from all of them with generated distractors.
// go test ./internal/tools -run TestFirstAnswer -v prints the table;
// -firstanswer.misses lists the development sets' misses (never the
// held-out or probe sets': reading them is how tuning on them starts).
var showFirstMisses = flag.Bool("firstanswer.misses", false, "list the development sets' first-answer misses")

type firstTally struct {
	on, confRight, confWrong, inFirst int
	off, offAnswered                  int
	// elsewhere counts the answers, in a registry built from several sets,
	// on another set's curated category (see evalset.Large.Owner): also
	// counted as wrong or answered above; the report gives both views.
	elsewhereOn, elsewhereOff int
	bytes                     []int
	misses                    []string
	// described: for the on-topic questions without a confident answer,
	// where the right category stands among the described candidates,
	// in all and by question shape.
	described        lead
	describedByShape map[string]*lead
}

// lead counts the not-confident answers to on-topic questions (n) and
// those whose described candidates have the right category first (top1)
// or among the first five (top5): what an agent that reads only the
// described candidates, a smaller model or a host that truncates, sees.
type lead struct{ n, top1, top5 int }

func (l lead) String() string {
	if l.n == 0 {
		return "none"
	}
	return fmt.Sprintf("%d not confident: right first %.3f, in the first five %.3f", l.n, float64(l.top1)/float64(l.n), float64(l.top5)/float64(l.n))
}

func (l *lead) add(at int) {
	l.n++
	if at == 0 {
		l.top1++
	}
	if at >= 0 && at < 5 {
		l.top5++
	}
}

// shapes reports the described-candidate figures by question shape,
// shapes in order.
func (f *firstTally) shapes() string {
	var b strings.Builder
	for _, sh := range slices.Sorted(maps.Keys(f.describedByShape)) {
		fmt.Fprintf(&b, "\n  %-10s %s", sh, f.describedByShape[sh])
	}
	return b.String()
}

func (f *firstTally) rate(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}

// pct is the q-th percentile of the text sizes.
func (f *firstTally) pct(q float64) int {
	s := slices.Clone(f.bytes)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func (f *firstTally) String() string {
	return fmt.Sprintf("on-topic %d: confident and right %.3f, confident and wrong %.3f, right in the first answer %.3f; not answerable %d: answered with confidence %.3f; text bytes p50 %d, p95 %d, max %d",
		f.on, f.rate(f.confRight, f.on), f.rate(f.confWrong, f.on), f.rate(f.inFirst, f.on),
		f.off, f.rate(f.offAnswered, f.off), f.pct(0.5), f.pct(0.95), f.pct(1))
}

// lists reports whether text names slug as a category (a whole slug, not
// part of a longer one).
func lists(text, slug string) bool {
	return regexp.MustCompile(`(^|[\s(])` + regexp.QuoteMeta(slug) + `([\s:),]|$)`).MatchString(text)
}

// elsewhere reports whether answer is another set's curated category
// than the question's (owner: evalset.Large.Owner; nil for one set).
func elsewhere(owner map[string]string, c evalset.Case, answer string) bool {
	set, ok := owner[answer]
	return ok && set != c.Set
}

func firstAnswers(t *testing.T, reg *registry.Registry, cases []evalset.Case, owner map[string]string) *firstTally {
	t.Helper()
	h := New(Config{Registry: reg, Matcher: matcher.New(reg), Threshold: DefaultThreshold})
	ctx := context.Background()
	f := &firstTally{}
	for _, c := range cases {
		if c.OnTopic() {
			if _, ok := reg.Category(c.Want); !ok {
				t.Fatalf("line %d: no category %q", c.Line, c.Want)
			}
		}
		out, err := h.GetSources(ctx, &gen.GetSourcesInput{Query: ptr(c.Query)})
		var text, got string
		var te *gen.ToolError
		switch {
		case err == nil:
			text, got = h.GetSourcesText(out), *out.Slug
		case errors.As(err, &te):
			text = te.Text
		default:
			t.Fatalf("line %d %q: %v", c.Line, c.Query, err)
		}
		f.bytes = append(f.bytes, len(text))
		if !c.OnTopic() {
			f.off++
			if got != "" {
				f.offAnswered++
				if elsewhere(owner, c, got) {
					f.elsewhereOff++
				}
				f.misses = append(f.misses, fmt.Sprintf("line %d %s %q: answered %s", c.Line, c.Shape, c.Query, got))
			}
			continue
		}
		f.on++
		if got == "" {
			at := -1
			if out, ok := te.Structured.(*gen.GetSourcesOutput); ok {
				at = slices.IndexFunc(out.Candidates, func(cc gen.CandidateCategory) bool { return cc.Slug == c.Want })
			}
			f.described.add(at)
			_, shape, ok := strings.Cut(c.Shape, "/")
			if !ok {
				shape = c.Shape
			}
			if f.describedByShape == nil {
				f.describedByShape = map[string]*lead{}
			}
			if f.describedByShape[shape] == nil {
				f.describedByShape[shape] = &lead{}
			}
			f.describedByShape[shape].add(at)
		}
		switch {
		case got == c.Want:
			f.confRight++
			f.inFirst++
		case got != "":
			f.confWrong++
			if elsewhere(owner, c, got) {
				f.elsewhereOn++
			}
			f.misses = append(f.misses, fmt.Sprintf("line %d %s %q: want %s, answered %s", c.Line, c.Shape, c.Query, c.Want, got))
		case lists(text, c.Want):
			f.inFirst++
		default:
			f.misses = append(f.misses, fmt.Sprintf("line %d %s %q: want %s, not in the first answer", c.Line, c.Shape, c.Query, c.Want))
		}
	}
	return f
}

// firstBars are the limits each set must keep: what the matcher reached
// when the figures were last reported, rounded against it, so a change
// that loses ground fails here. Issue 32's targets are at most 1% of
// on-topic questions confident and wrong, at most 3% of the questions no
// category answers answered, the right category in the first answer for
// 98% (90% at 1,000 categories), and 4 KB of text; the closing note says
// where a set is short of them.
type firstBars struct {
	confRight, confWrong, offAnswered, inFirst float64
}

func checkFirst(t *testing.T, f *firstTally, b firstBars) {
	t.Helper()
	if f.rate(f.confWrong, f.on) > b.confWrong || f.rate(f.offAnswered, f.off) > b.offAnswered || f.pct(0.95) > answerBudget ||
		f.rate(f.confRight, f.on) < b.confRight || f.rate(f.inFirst, f.on) < b.inFirst {
		t.Errorf("outside the bars (%+v, p95 ≤ %d bytes): %s", b, answerBudget, f)
	}
}

func TestFirstAnswer(t *testing.T) {
	bars := map[string]firstBars{
		"dev":      {confRight: 0.25, confWrong: 0.01, offAnswered: 0.02, inFirst: 0.99},
		"dev2":     {confRight: 0.30, confWrong: 0.005, offAnswered: 0.02, inFirst: 0.99},
		"dev3":     {confRight: 0.21, confWrong: 0.015, offAnswered: 0.03, inFirst: 0.98},
		"heldout":  {confRight: 0.17, confWrong: 0.015, offAnswered: 0.03, inFirst: 0.98},
		"heldout2": {confRight: 0.34, confWrong: 0.015, offAnswered: 0.05, inFirst: 0.98},
		"probe":    {confRight: 0.37, confWrong: 0.011, offAnswered: 0.04, inFirst: 0.98},
	}
	for _, set := range evalset.Sets("../..") {
		t.Run(set.Name, func(t *testing.T) {
			reg, cases := loadSet(t, set)
			f := firstAnswers(t, reg, cases, nil)
			t.Logf("%d categories: %s", len(reg.Categories()), f)
			t.Logf("described candidates: %s; by shape:%s", f.described, f.shapes())
			if *showFirstMisses && set.Tuned {
				for _, m := range f.misses {
					t.Log(m)
				}
			}
			checkFirst(t, f, bars[set.Name])
		})
	}
}

// TestFirstAnswerBlend: registries of about 120 categories made of
// several sets (evalset.Blends), the size at which issue 48's agent trial
// found the right category first among the described candidates 46% of
// the time and among the first five 63%. It reports per asked set and per
// question shape where the right category stands among the described
// candidates of a not-confident answer, and holds the honesty bars.
func TestFirstAnswerBlend(t *testing.T) {
	blendTop5 := map[string]float64{"blend-dev": 0.63, "blend-heldout": 0.75}
	blendTop1 := map[string]float64{"blend-dev": 0.37, "blend-heldout": 0.47}
	for _, b := range evalset.Blends() {
		t.Run(b.Name, func(t *testing.T) {
			l, err := b.Build("../..")
			if err != nil {
				t.Fatal(err)
			}
			reg, err := registry.Load(l.Registry)
			if err != nil {
				t.Fatal(err)
			}
			f := firstAnswers(t, reg, l.Cases, l.Owner)
			t.Logf("%d categories: %s", len(reg.Categories()), f)
			t.Logf("described candidates: %s; by shape:%s", f.described, f.shapes())
			t.Logf("on another set's curated category: confident on-topic answers %d, answers to questions no category of their own set answers %d; without them, confident and wrong %.3f, answered with confidence %.3f",
				f.elsewhereOn, f.elsewhereOff, f.rate(f.confWrong-f.elsewhereOn, f.on), f.rate(f.offAnswered-f.elsewhereOff, f.off))
			for _, set := range append(slices.Clone(b.Asked), b.Own) {
				if set == "" {
					continue
				}
				if set == b.Own {
					set = b.Name
				}
				var cases []evalset.Case
				for _, c := range l.Cases {
					if c.Set == set {
						cases = append(cases, c)
					}
				}
				fs := firstAnswers(t, reg, cases, l.Owner)
				t.Logf("%s: %s; described candidates: %s; by shape:%s", set, fs, fs.described, fs.shapes())
			}
			if *showFirstMisses && b.Tuned {
				for _, m := range f.misses {
					t.Log(m)
				}
			}
			// What the matcher reached when the figure was first measured,
			// rounded against it: the order must not lose ground (issue
			// 48's target is 0.85).
			if top5, bar := float64(f.described.top5)/float64(f.described.n), blendTop5[b.Name]; top5 < bar {
				t.Errorf("right among the first five described candidates %.3f, below %.2f", top5, bar)
			}
			if top1, bar := float64(f.described.top1)/float64(f.described.n), blendTop1[b.Name]; top1 < bar {
				t.Errorf("right first among the described candidates %.3f, below %.2f", top1, bar)
			}
		})
	}
}

// TestFirstAnswerLarge: every set's categories and questions in one
// registry of 1,000 categories, the rest generated distractors.
func TestFirstAnswerLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and asks a 1,000-category registry")
	}
	big, err := evalset.Big("../..", evalset.Sets("../.."), 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Load(big.Registry)
	if err != nil {
		t.Fatal(err)
	}
	f := firstAnswers(t, reg, big.Cases, big.Owner)
	t.Logf("%d categories: %s", len(reg.Categories()), f)
	t.Logf("described candidates: %s; by shape:%s", f.described, f.shapes())
	t.Logf("of which on another set's curated category (the sets' topics overlap): confident on-topic answers %d (%.3f), answers to questions no category of their own set answers %d (%.3f); without them, confident and wrong %.3f, answered with confidence %.3f",
		f.elsewhereOn, f.rate(f.elsewhereOn, f.on), f.elsewhereOff, f.rate(f.elsewhereOff, f.off),
		f.rate(f.confWrong-f.elsewhereOn, f.on), f.rate(f.offAnswered-f.elsewhereOff, f.off))
	byShape := map[string]int{}
	for _, m := range f.misses {
		if strings.Contains(m, "not in the first answer") {
			byShape[strings.Fields(m)[2]]++
		}
	}
	t.Logf("not in the first answer, by set and shape: %v", byShape)
	if *showFirstMisses {
		tuned := map[string]bool{}
		for _, s := range evalset.Sets("../..") {
			tuned[s.Name] = s.Tuned
		}
		for _, m := range f.misses {
			if set, _, _ := strings.Cut(strings.Fields(m)[2], "/"); tuned[set] {
				t.Log(m)
			}
		}
	}
	checkFirst(t, f, firstBars{confRight: 0.14, confWrong: 0.03, offAnswered: 0.13, inFirst: 0.90})
}

// BenchmarkFirstAnswerLarge is one get_sources answer, text included, on
// the 1,000-category registry of TestFirstAnswerLarge, cycling through its
// questions: most are no-match answers, which rank and list the most.
func BenchmarkFirstAnswerLarge(b *testing.B) {
	big, err := evalset.Big("../..", evalset.Sets("../.."), 1000, 1)
	if err != nil {
		b.Fatal(err)
	}
	reg, err := registry.Load(big.Registry)
	if err != nil {
		b.Fatal(err)
	}
	h := New(Config{Registry: reg, Matcher: matcher.New(reg), Threshold: DefaultThreshold})
	ctx := context.Background()
	var te *gen.ToolError
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c := big.Cases[i%len(big.Cases)]
		out, err := h.GetSources(ctx, &gen.GetSourcesInput{Query: ptr(c.Query)})
		switch {
		case err == nil:
			_ = h.GetSourcesText(out)
		case !errors.As(err, &te):
			b.Fatal(err)
		}
	}
}

// loadSet is an evaluation set's registry and questions.
func loadSet(t *testing.T, set evalset.Set) (*registry.Registry, []evalset.Case) {
	t.Helper()
	reg, err := registry.LoadFile(set.Registry)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := evalset.Read(set.Queries)
	if err != nil {
		t.Fatal(err)
	}
	return reg, cases
}
