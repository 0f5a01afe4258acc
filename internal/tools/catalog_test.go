package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
)

// noMatchFor asks a registry of n generated categories a question none of
// them answers and returns the no-match answer.
func noMatchFor(t *testing.T, n int) (*gen.GetSourcesOutput, string) {
	t.Helper()
	h := handlers(t, registrytest.Encode(n, 3))
	_, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("replication for a beginner zzqx")})
	te := toolError(t, err)
	return te.Structured.(*gen.GetSourcesOutput), te.Text
}

// shownOnce checks that every category the answer lists is a real one,
// listed once in the structured answer and once in the text, and returns
// how many it lists.
func shownOnce(t *testing.T, out *gen.GetSourcesOutput, text string) int {
	t.Helper()
	seen := map[string]bool{}
	var slugs []string
	for _, c := range out.Candidates {
		slugs = append(slugs, c.Slug)
	}
	for _, c := range out.MoreCategories {
		slugs = append(slugs, c.Slug)
		if c.Name == "" {
			t.Errorf("%s listed without its name", c.Slug)
		}
	}
	for _, s := range slugs {
		if seen[s] {
			t.Errorf("%s listed twice", s)
		}
		seen[s] = true
		if timesListed(text, s) != 1 {
			t.Errorf("%s is not on exactly one line of the text", s)
		}
	}
	return len(seen)
}

// timesListed is how often text lists entry ("slug", or "[n] slug" in a
// federated answer): a described line, a "slug: name" line, or an item of
// the compact "by slug:" list of a large registry.
func timesListed(text, entry string) int {
	n := strings.Count(text, "\n- "+entry+" (") + strings.Count(text, "\n- "+entry+":")
	for _, line := range strings.Split(text, "\n") {
		if _, items, ok := strings.Cut(line, "by slug: "); ok {
			n += strings.Count(", "+items+", ", ", "+entry+", ")
		}
	}
	return n
}

// A registry small enough to show whole: every category is in the first
// answer, the described candidates (those that share a word with the
// query: "replication") first.
func TestNoMatchListsASmallRegistryWhole(t *testing.T) {
	out, text := noMatchFor(t, 40)
	if got := shownOnce(t, out, text); got != 40 {
		t.Errorf("listed %d of 40 categories:\n%s", got, text)
	}
	// The candidates that share words with the query come first; those
	// after nearLabel are close to it in meaning only (listNear).
	shared := len(out.Candidates)
	if at := strings.Index(text, nearLabel); at >= 0 {
		for _, c := range out.Candidates {
			if i := strings.Index(text, "\n- "+c.Slug+" ("); i > at {
				shared--
			}
		}
	}
	if shared == 0 || !strings.Contains(text, fmt.Sprintf("The registry's 40 categories, the %d that share words with the query first, closest first, then the others:", shared)) ||
		!strings.Contains(text, "this registry does not cover the topic") || strings.Contains(text, "list_categories") {
		t.Errorf("%d candidates; text:\n%s", len(out.Candidates), text)
	}
	if len(text) > answerBudget {
		t.Errorf("%d bytes, budget %d", len(text), answerBudget)
	}
}

// A registry too large to show: the closest ones within the budget, up to
// ten of them described, then others, and how to browse the rest.
func TestNoMatchListsALargeRegistryToItsBudget(t *testing.T) {
	out, text := noMatchFor(t, 400)
	got := shownOnce(t, out, text)
	if got < 30 || got >= 400 || len(out.Candidates) == 0 || len(out.Candidates) > maxCandidatesLarge {
		t.Errorf("listed %d categories, %d described:\n%s", got, len(out.Candidates), text)
	}
	if len(text) > answerBudget || !strings.Contains(text, fmt.Sprintf(" of the registry's 400 categories: the %d that share words with the query, closest first, then others:", len(out.Candidates))) || !strings.Contains(text, "list_categories with filter") {
		t.Errorf("%d bytes (budget %d):\n%s", len(text), answerBudget, text)
	}
	for i, c := range out.Candidates[1:] {
		if c.Score > out.Candidates[i].Score {
			t.Errorf("candidates out of order: %+v", out.Candidates)
		}
	}
}

// A no-match answer leaves headingRoom for its listing's heading: every
// form of the heading fits it at counts of up to 9,999 shown of 999,999.
func TestHeadingFitsItsRoom(t *testing.T) {
	const shown, total = 9_999, 999_999
	for _, c := range []catalog{
		{total: total, whole: true},
		{total: total},
		{total: total, hinted: shown},
		{total: total, grounded: total, whole: true},
		{total: total, grounded: shown, whole: true},
		{total: total, grounded: shown},
		{total: total, grounded: shown - 1},
	} {
		c.more = make([]listed, shown)
		if h := c.heading("the registry's"); len(h) > headingRoom {
			t.Errorf("%d bytes, room %d: %q", len(h), headingRoom, h)
		}
	}
}

// listNear fills the described candidates up to maxCandidates after the
// grounded with the categories near the query in meaning only, under
// nearLabel; a query that shares nothing with any category gets none,
// and list (federated answers) never fills.
func TestListNearFillsAfterTheGrounded(t *testing.T) {
	reg, err := registry.Load(frozen.Registry(frozen.Basic))
	if err != nil {
		t.Fatal(err)
	}
	ranked := []matcher.Scored{
		{Slug: "rust-learning", Score: 0.3, Grounded: true},
		{Slug: "go-learning", Score: 0.01, Near: true},
		{Slug: "shell-scripting", Score: 0.009},
		{Slug: "python-packaging", Score: 0.008, Near: true},
	}
	described := func(c catalog) []string {
		var out []string
		for _, l := range c.described {
			out = append(out, l.slug)
		}
		return out
	}
	c := listNear([]shelf{{reg: reg, ranked: ranked}}, answerBudget, true)
	if got, want := described(c), []string{"rust-learning", "go-learning", "python-packaging"}; !slices.Equal(got, want) || c.near != 2 || c.grounded != 1 {
		t.Errorf("described %v (near %d, grounded %d), want %v (near 2, grounded 1)", got, c.near, c.grounded, want)
	}
	rust, label, goLine := strings.Index(c.text, "\n- rust-learning ("), strings.Index(c.text, nearLabel), strings.Index(c.text, "\n- go-learning (")
	if rust < 0 || label < rust || goLine < label || strings.Count(c.text, nearLabel) != 1 {
		t.Errorf("want the grounded, then %q, then the near ones:\n%s", nearLabel, c.text)
	}
	if h := c.heading("the registry's"); !strings.Contains(h, "the 1 that share words with the query first") {
		t.Errorf("heading %q counts the near ones as sharing words", h)
	}
	if got := described(list([]shelf{{reg: reg, ranked: ranked}}, answerBudget)); !slices.Equal(got, []string{"rust-learning"}) {
		t.Errorf("list described %v, want rust-learning alone", got)
	}
	none := listNear([]shelf{{reg: reg, ranked: ranked[1:]}}, answerBudget, true)
	if len(none.described) != 0 || none.near != 0 || strings.Contains(none.text, nearLabel) {
		t.Errorf("nothing grounded, yet described %v:\n%s", described(none), none.text)
	}
}
