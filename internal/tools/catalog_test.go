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

// textListed is the slugs text lists, in its order: described lines
// ("- slug (" or "- slug:") and the items of a compact "by slug:" line.
func textListed(text string) []string {
	var slugs []string
	for _, line := range strings.Split(text, "\n") {
		if _, items, ok := strings.Cut(line, "by slug: "); ok {
			slugs = append(slugs, strings.Split(items, ", ")...)
			continue
		}
		if rest, ok := strings.CutPrefix(line, "- "); ok {
			if i := strings.IndexAny(rest, " :"); i > 0 {
				slugs = append(slugs, rest[:i])
			}
		}
	}
	return slugs
}

// partialListing checks that a no-match answer whose list is not the
// whole registry leaves the further categories to its text: the
// structured answer carries the described candidates alone. It returns
// how many categories the text lists.
func partialListing(t *testing.T, out *gen.GetSourcesOutput, text string) int {
	t.Helper()
	if len(out.MoreCategories) != 0 {
		t.Errorf("a partial listing carries %d more_categories; want none (the text lists them)", len(out.MoreCategories))
	}
	return len(textListed(text))
}

// A registry small enough to show whole: every category is in the first
// answer, the described candidates (those that share a word with the
// query: "replication") first.
func TestNoMatchListsASmallRegistryWhole(t *testing.T) {
	out, text := noMatchFor(t, 40)
	if got := shownOnce(t, out, text); got != 40 {
		t.Errorf("listed %d of 40 categories:\n%s", got, text)
	}
	// The candidates come first, by one key, those close to the query in
	// meaning only marked so (listNear); the heading counts them apart.
	heading := fmt.Sprintf("The registry's 40 categories, the %d that share words with the query first, closest first, then the others:", len(out.Candidates))
	if near := strings.Count(text, meaningOnlyMark+"): "); near > 0 {
		heading = fmt.Sprintf("The registry's 40 categories, the %d closest first (%d in meaning only, so marked), then the others:", len(out.Candidates), near)
	}
	if len(out.Candidates) == 0 || !strings.Contains(text, heading) ||
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
	shownOnce(t, out, text)
	got := partialListing(t, out, text)
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
		{total: total, grounded: shown - 5, near: 5, whole: true},
		{total: total, grounded: shown - 5, near: 5},
		{total: total, grounded: shown - 6, near: 5},
	} {
		c.more = make([]listed, shown)
		if h := c.heading("the registry's"); len(h) > headingRoom {
			t.Errorf("%d bytes, room %d: %q", len(h), headingRoom, h)
		}
	}
}

// listNear describes the grounded categories and those near the query
// in meaning only by one key (matcher.Scored.Lead), so a near one may
// come before a weak word match; each near one's line says so and shows
// no score, and the heading counts them apart. A query that shares
// nothing with any category gets none, and list (federated answers)
// describes the grounded alone.
func TestListNearOrdersByLead(t *testing.T) {
	reg, err := registry.Load(frozen.Registry(frozen.Basic))
	if err != nil {
		t.Fatal(err)
	}
	ranked := []matcher.Scored{
		{Slug: "rust-learning", Score: 0.3, Grounded: true, Lead: 0.35},
		{Slug: "shell-scripting", Score: 0.1, Grounded: true, Lead: 0.12},
		{Slug: "go-learning", Score: 0.01, Near: true, Lead: 0.4},
		{Slug: "regular-expressions", Score: 0.009},
		{Slug: "python-packaging", Score: 0.008, Near: true, Lead: 0.2},
	}
	described := func(c catalog) []string {
		var out []string
		for _, l := range c.described {
			out = append(out, l.slug)
		}
		return out
	}
	c := listNear([]shelf{{reg: reg, ranked: ranked}}, answerBudget, true)
	if got, want := described(c), []string{"go-learning", "rust-learning", "python-packaging", "shell-scripting"}; !slices.Equal(got, want) || c.near != 2 || c.grounded != 2 {
		t.Errorf("described %v (near %d, grounded %d), want %v (near 2, grounded 2)", got, c.near, c.grounded, want)
	}
	for _, l := range c.described {
		line := c.text()[strings.Index(c.text(), "\n- "+l.slug+" ("):]
		line = line[:strings.IndexByte(line[1:], '\n')+1]
		if near := l.slug == "go-learning" || l.slug == "python-packaging"; l.near != near || strings.Contains(line, meaningOnlyMark) != near || strings.Contains(line, "score") == near {
			t.Errorf("%s: near %v, line %q", l.slug, l.near, line)
		}
	}
	if h := c.heading("the registry's"); !strings.Contains(h, "the 4 closest first (2 in meaning only, so marked)") {
		t.Errorf("heading %q does not count the near ones apart", h)
	}
	if got := described(list([]shelf{{reg: reg, ranked: ranked}}, answerBudget)); !slices.Equal(got, []string{"rust-learning", "shell-scripting"}) {
		t.Errorf("list described %v, want rust-learning and shell-scripting", got)
	}
	none := listNear([]shelf{{reg: reg, ranked: []matcher.Scored{ranked[2], ranked[3], ranked[4]}}}, answerBudget, true)
	if len(none.described) != 0 || none.near != 0 || strings.Contains(none.text(), meaningOnlyMark) {
		t.Errorf("nothing grounded, yet described %v:\n%s", described(none), none.text())
	}
}
