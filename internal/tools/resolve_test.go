package tools

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/frozen"
)

// toolError runs call and returns its tool error, failing the test when the
// call succeeded or failed otherwise.
func toolError(t *testing.T, err error) *gen.ToolError {
	t.Helper()
	var te *gen.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("got %v, want a tool error", err)
	}
	return te
}

// The two-call flow: a question the matcher is not sure of comes back with
// candidates, and the agent's pick comes back by slug with score 1.
func TestCandidatesThenSlug(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	ctx := context.Background()
	_, err := h.GetSources(ctx, &gen.GetSourcesInput{Query: ptr("keeping my home network's secrets safe")})
	te := toolError(t, err)
	miss := te.Structured.(*gen.GetSourcesOutput)
	if len(miss.Candidates) == 0 || len(miss.Candidates) > maxCandidates {
		t.Fatalf("%d candidates, want 1 to %d", len(miss.Candidates), maxCandidates)
	}
	for i, c := range miss.Candidates {
		if c.Name == "" || c.Description == "" || !strings.Contains(te.Text, "\n- "+c.Slug+" (") {
			t.Errorf("candidate %d %+v: missing a part, or not in the text:\n%s", i, c, te.Text)
		}
		if i > 0 && c.Score > miss.Candidates[i-1].Score {
			t.Errorf("candidates out of order: %+v", miss.Candidates)
		}
	}
	if miss.AvailableCategories != nil {
		t.Errorf("no-match answer fills the retired available_categories: %v", miss.AvailableCategories)
	}
	if !strings.Contains(te.Text, "call get_sources with its slug") {
		t.Errorf("text does not say what to do next: %s", te.Text)
	}
	pick := miss.Candidates[0].Slug
	out, err := h.GetSources(ctx, &gen.GetSourcesInput{Slug: &pick})
	if err != nil {
		t.Fatal(err)
	}
	if *out.Slug != pick || *out.Score != 1 || len(out.Sources) != 3 || out.Query != "" {
		t.Errorf("by slug: %+v", out)
	}
}

func TestSlugErrors(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	ctx := context.Background()
	// A misspelt slug: the closest slugs, spelled alike, first.
	_, err := h.GetSources(ctx, &gen.GetSourcesInput{Slug: ptr("rust-lerning")})
	te := toolError(t, err)
	got := te.Structured.(*gen.GetSourcesOutput).Candidates
	if len(got) == 0 || got[0].Slug != "rust-learning" || !strings.Contains(te.Text, `No category has the slug "rust-lerning"`) {
		t.Errorf("misspelt slug: %+v\n%s", got, te.Text)
	}
	// A slug made of words: the categories about those words.
	_, err = h.GetSources(ctx, &gen.GetSourcesInput{Slug: ptr("postgres-tuning")})
	got = toolError(t, err).Structured.(*gen.GetSourcesOutput).Candidates
	if !slices.ContainsFunc(got, func(c gen.CandidateCategory) bool { return c.Slug == "postgresql-performance" }) {
		t.Errorf("worded slug: %+v", got)
	}
	// Both or neither never reach the handler: the decoder refuses them
	// (the schema's oneOf), which the protocol answers with -32602. A
	// caller that skips the decoder gets an internal error, not an answer.
	for name, in := range map[string]*gen.GetSourcesInput{
		"both":    {Query: ptr("learn rust"), Slug: ptr("rust-learning")},
		"neither": {},
	} {
		var te *gen.ToolError
		if _, err := h.GetSources(ctx, in); err == nil || errors.As(err, &te) {
			t.Errorf("%s: %v, want an internal error", name, err)
		}
	}
}

func TestListCategoriesFilterAndPages(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	ctx := context.Background()
	all, err := h.ListCategories(ctx, &gen.ListCategoriesInput{})
	if err != nil || all.NextCursor != nil || len(all.Categories) < 3 {
		t.Fatalf("all: %+v, %v", all, err)
	}
	// Pages of two, followed by cursor, give back the same list.
	var paged []string
	in := &gen.ListCategoriesInput{Limit: ptr(2)}
	for pages := 0; ; pages++ {
		if pages > len(all.Categories) {
			t.Fatal("cursor never ends")
		}
		out, err := h.ListCategories(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range out.Categories {
			paged = append(paged, c.Slug)
		}
		if out.NextCursor == nil {
			break
		}
		if len(out.Categories) != 2 || !strings.Contains(h.ListCategoriesText(out), *out.NextCursor) {
			t.Fatalf("page %d: %+v", pages, out)
		}
		in = &gen.ListCategoriesInput{Limit: ptr(2), Cursor: out.NextCursor}
	}
	var want []string
	for _, c := range all.Categories {
		want = append(want, c.Slug)
	}
	if !slices.Equal(paged, want) {
		t.Errorf("paged %v, want %v", paged, want)
	}
	// Filter words that start words of the slug, name or description find
	// the category.
	out, err := h.ListCategories(ctx, &gen.ListCategoriesInput{Filter: ptr("SELF hos")})
	if err != nil || len(out.Categories) != 1 || out.Categories[0].Slug != "self-hosted-email" {
		t.Errorf("filter: %+v, %v", out, err)
	}
	// A word no category has neither finds one nor keeps the others from
	// finding it; alone, it finds nothing.
	out, _ = h.ListCategories(ctx, &gen.ListCategoriesInput{Filter: ptr("self zebra")})
	if len(out.Categories) == 0 || out.Categories[0].Slug != "self-hosted-email" {
		t.Errorf("filter with a word no category has: %+v", out.Categories)
	}
	out, _ = h.ListCategories(ctx, &gen.ListCategoriesInput{Filter: ptr("zebra")})
	if len(out.Categories) != 0 {
		t.Errorf("filter with only a word no category has: %+v", out.Categories)
	}
	te := toolError(t, func() error {
		_, err := h.ListCategories(ctx, &gen.ListCategoriesInput{Cursor: ptr("not-a-cursor")})
		return err
	}())
	if !strings.HasPrefix(te.Text, "cursor: ") {
		t.Errorf("bad cursor: %s", te.Text)
	}
}
