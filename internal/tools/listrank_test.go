package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
)

// filterAnswer is the slugs list_categories answers filter with on h, and the
// closest it names.
func filterAnswer(t *testing.T, h *Handlers, filter string) (found, closest []string) {
	t.Helper()
	out, err := h.ListCategories(context.Background(), &gen.ListCategoriesInput{Filter: &filter})
	if err != nil {
		t.Fatalf("filter %q: %v", filter, err)
	}
	for _, c := range out.Categories {
		found = append(found, c.Slug)
	}
	for _, c := range out.Closest {
		closest = append(closest, c.Slug)
	}
	return found, closest
}

// withTags is the frozen registry name with the curator's tags added to
// the categories tags names.
func withTags(t *testing.T, name string, tags map[string][]string) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(frozen.Registry(name), &doc); err != nil {
		t.Fatal(err)
	}
	cats := doc["categories"].(map[string]any)
	for slug, tt := range tags {
		cats[slug].(map[string]any)["tags"] = tt
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The filter reads words as the matcher does: a word's other forms meet
// (stems), where the old filter wanted the start of a word.
func TestListFilterStems(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	for _, filter := range []string{"hardened", "secure", "security"} {
		if found, _ := filterAnswer(t, h, filter); len(found) == 0 || found[0] != "linux-server-hardening" {
			t.Errorf("filter %q: %v, want linux-server-hardening first", filter, found)
		}
	}
}

// A misspelt word finds its category.
func TestListFilterTypos(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	for filter, want := range map[string]string{"goroutnes": "go-learning", "postgrse": "postgresql-performance", "regullar": "regular-expressions"} {
		if found, _ := filterAnswer(t, h, filter); len(found) == 0 || found[0] != want {
			t.Errorf("filter %q: %v, want %s first", filter, found, want)
		}
	}
}

// Words only a category's query patterns hold find it.
func TestListFilterQueryPatterns(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	for filter, want := range map[string]string{"docker": "self-hosted-email", "reflog": "git-version-control", "golang": "go-learning", "ubuntu": "linux-server-hardening"} {
		if found, _ := filterAnswer(t, h, filter); len(found) == 0 || found[0] != want {
			t.Errorf("filter %q: %v, want %s first", filter, found, want)
		}
	}
}

// The curator's tags are shown in place of the slug's words, meet the
// filter as the matcher compares words, and a tag match ranks above
// what the matcher finds in the text.
func TestListFilterTags(t *testing.T) {
	h := handlers(t, withTags(t, frozen.Basic, map[string][]string{
		"self-hosted-email": {"security", "containers", "mail-server"},
		"shell-scripting":   {"devops"},
	}))
	all, err := h.ListCategories(context.Background(), &gen.ListCategoriesInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all.Categories {
		want := strings.Split(c.Slug, "-")
		switch c.Slug {
		case "self-hosted-email":
			want = []string{"security", "containers", "mail-server"}
		case "shell-scripting":
			want = []string{"devops"}
		}
		if !slices.Equal(c.Tags, want) {
			t.Errorf("%s: tags %v, want %v", c.Slug, c.Tags, want)
		}
	}
	for filter, want := range map[string][]string{
		"devops":      {"shell-scripting"},
		"container":   {"self-hosted-email"},                           // the tag's stem
		"mail-server": {"self-hosted-email", "linux-server-hardening"}, // the whole tag, then the text's matches
		// The tag outranks linux-server-hardening, whose text says security.
		"security": {"self-hosted-email", "linux-server-hardening"},
	} {
		if found, _ := filterAnswer(t, h, filter); len(found) < len(want) || !slices.Equal(found[:len(want)], want) {
			t.Errorf("filter %q: %v, want %v first", filter, found, want)
		}
	}
}

// Categories come best first, in the matcher's order, not by slug.
func TestListFilterRanks(t *testing.T) {
	reg, err := registry.Load(frozen.Registry(frozen.Basic))
	if err != nil {
		t.Fatal(err)
	}
	h := handlers(t, frozen.Registry(frozen.Basic))
	m := matcher.New(reg)
	unsorted := false
	for _, filter := range []string{"programming language", "email server", "learning", "server setup"} {
		found, _ := filterAnswer(t, h, filter)
		ranked, err := m.Match(filter, len(reg.Categories()))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, r := range ranked {
			if slices.Contains(found, r.Slug) {
				want = append(want, r.Slug)
			}
		}
		if len(found) < 2 || !slices.Equal(found, want) {
			t.Errorf("filter %q: %v, want the matcher's order %v", filter, found, want)
		}
		unsorted = unsorted || !slices.IsSorted(found)
	}
	if !unsorted {
		t.Error("every answer is in slug order: the filter does not rank")
	}
	// Pages of one follow the ranking.
	var paged []string
	in := &gen.ListCategoriesInput{Filter: ptr("learning"), Limit: ptr(1)}
	for range 10 {
		out, err := h.ListCategories(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range out.Categories {
			paged = append(paged, c.Slug)
		}
		if out.NextCursor == nil {
			break
		}
		in.Cursor = out.NextCursor
	}
	if whole, _ := filterAnswer(t, h, "learning"); !slices.Equal(paged, whole) {
		t.Errorf("paged %v, want %v", paged, whole)
	}
	// A cursor of the unfiltered listing is not one for a filter.
	all, _ := h.ListCategories(context.Background(), &gen.ListCategoriesInput{Limit: ptr(1)})
	te := toolError(t, func() error {
		_, err := h.ListCategories(context.Background(), &gen.ListCategoriesInput{Filter: ptr("learning"), Cursor: all.NextCursor})
		return err
	}())
	if !strings.HasPrefix(te.Text, "cursor: ") {
		t.Errorf("slug cursor with a filter: %s", te.Text)
	}
}

// Nothing found: the answer names the closest categories, marked as not
// matches, and says how to browse.
func TestListFilterEmptyHint(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	for _, filter := range []string{"database", "zebra", "k8s"} {
		out, err := h.ListCategories(context.Background(), &gen.ListCategoriesInput{Filter: ptr(filter)})
		if err != nil {
			t.Fatal(err)
		}
		text := h.ListCategoriesText(out)
		if len(out.Categories) != 0 || len(out.Closest) > closestShown || !strings.Contains(text, "To browse: call list_categories without filter") || !strings.Contains(text, "get_sources") {
			t.Errorf("filter %q: %+v\n%s", filter, out, text)
		}
		if len(out.Closest) > 0 && !strings.Contains(text, "Closest, not matches") {
			t.Errorf("filter %q: closest not marked:\n%s", filter, text)
		}
	}
	if _, closest := filterAnswer(t, h, "database"); len(closest) == 0 || closest[0] != "postgresql-performance" {
		t.Errorf("database: closest %v, want postgresql-performance first", closest)
	}
}

// BenchmarkListCategoriesFiltered is a whole filtered call on 10,000
// generated categories: the matcher's ranking, the tags and the word
// starts, then a page.
func BenchmarkListCategoriesFiltered(b *testing.B) {
	h, _ := serving(b, registrytest.Encode(10000, 1), nil, Config{})
	for _, filter := range []string{"security", "databse", "nothing-has-this-word"} {
		b.Run(filter, func(b *testing.B) {
			in := &gen.ListCategoriesInput{Filter: &filter}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.ListCategories(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
