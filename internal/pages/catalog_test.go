package pages

import (
	"context"
	"slices"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
	"github.com/three-good-sources/3gs/internal/tools"
	"github.com/three-good-sources/3gs/internal/tooltable"
)

// A browser never sees the MCP instructions: when the server gave their
// catalog to its sessions, a search that finds no confident category
// still lists further categories, none of them a candidate, as it did
// before.
func TestSearchListsMoreWhenTheCatalogIsInTheInstructions(t *testing.T) {
	reg, err := registry.Load(registrytest.Encode(40, 3))
	if err != nil {
		t.Fatal(err)
	}
	for _, catalog := range []bool{false, true} {
		h := tools.New(tools.Config{Registry: reg, Matcher: matcher.New(reg), Threshold: tools.DefaultThreshold})
		ctx := context.Background()
		if v, _, ok := h.Catalog(150); catalog && !ok {
			t.Fatal("no catalog")
		} else if catalog {
			// As if the page were asked on behalf of a session given the
			// catalog: the answer points there, and the page lists anyway.
			ctx = tooltable.WithCatalog(ctx, v)
		}
		b, err := New(Config{Tools: h}).searchBody(ctx, "replication for a beginner zzqx")
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Candidates) == 0 || len(b.More) != moreShown {
			t.Errorf("catalog %v: %d candidates, %d more", catalog, len(b.Candidates), len(b.More))
		}
		for _, m := range b.More {
			if slices.ContainsFunc(b.Candidates, func(c gen.CandidateCategory) bool { return c.Slug == m.Slug }) || m.Name == "" {
				t.Errorf("catalog %v: %+v listed again or without its name", catalog, m)
			}
		}
	}
}

// A registry too large to list whole: the answer's structured
// more_categories is left out (its text lists the closest), and the page
// still lists further categories, none of them a candidate.
func TestSearchListsMoreInALargeRegistry(t *testing.T) {
	reg, err := registry.Load(registrytest.Encode(300, 3))
	if err != nil {
		t.Fatal(err)
	}
	h := tools.New(tools.Config{Registry: reg, Matcher: matcher.New(reg), Threshold: tools.DefaultThreshold})
	b, err := New(Config{Tools: h}).searchBody(context.Background(), "replication for a beginner zzqx")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Candidates) == 0 || len(b.More) != moreShown {
		t.Errorf("%d candidates, %d more; want some, and %d more", len(b.Candidates), len(b.More), moreShown)
	}
	for _, m := range b.More {
		if slices.ContainsFunc(b.Candidates, func(c gen.CandidateCategory) bool { return c.Slug == m.Slug }) || m.Name == "" {
			t.Errorf("%+v listed again or without its name", m)
		}
	}
}
