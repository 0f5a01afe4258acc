package tools

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/gen/gentest"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/tooltable"
)

// noMatchOn asks h a question none of its categories answers, as a caller
// whose session was given the catalog of version given ("" for none).
func noMatchOn(t *testing.T, h *Handlers, given string) (*gen.GetSourcesOutput, string) {
	t.Helper()
	ctx := context.Background()
	if given != "" {
		ctx = tooltable.WithCatalog(ctx, given)
	}
	_, err := h.GetSources(ctx, &gen.GetSourcesInput{Query: ptr("replication for a beginner zzqx")})
	te := toolError(t, err)
	out := te.Structured.(*gen.GetSourcesOutput)
	js, err := out.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gentest.DecodeOutput(gen.ToolGetSources, js); err != nil {
		t.Errorf("structured answer does not match the output schema: %v", err)
	}
	return out, te.Text
}

// A session's instructions carry a small registry's catalog (Catalog): a
// no-match answer to it lists the described candidates, names the
// catalog and its version, and repeats no other slug.
func TestNoMatchPointsAtTheCatalogItWasGiven(t *testing.T) {
	h := handlers(t, registrytest.Encode(40, 3))
	v, slugs, ok := h.Catalog(150)
	if !ok || len(slugs) != 40 || !strings.Contains(v, "sha256:") {
		t.Fatalf("Catalog(150) of 40 categories: %q, %d slugs, %v", v, len(slugs), ok)
	}
	out, text := noMatchOn(t, h, v)
	if out.CatalogVersion == nil || *out.CatalogVersion != v || len(out.MoreCategories) != 0 || len(out.Candidates) == 0 {
		t.Fatalf("catalog_version %v, %d more, %d candidates", out.CatalogVersion, len(out.MoreCategories), len(out.Candidates))
	}
	if !strings.Contains(text, "catalog of categories in this server's instructions (registry "+v+")") || !strings.Contains(text, "get_sources with its slug") || !strings.Contains(text, "as list_categories does") {
		t.Errorf("the text does not point at the catalog:\n%s", text)
	}
	for _, s := range slugs {
		described := slices.ContainsFunc(out.Candidates, func(c gen.CandidateCategory) bool { return c.Slug == s })
		if n := timesListed(text, s); described && n != 1 || !described && strings.Contains(text, s) {
			t.Errorf("%s (described %v) listed %d times:\n%s", s, described, n, text)
		}
	}
	whole, wholeText := noMatchFor(t, 40)
	if len(text) >= len(wholeText)/2 || len(whole.MoreCategories) == 0 {
		t.Errorf("%d bytes with the catalog at hand, %d without", len(text), len(wholeText))
	}
}

// After a reload that changes the registry a session holds the older
// catalog: the answer to it lists the categories again and says its
// catalog is out of date; a session given the new one is pointed at it.
// A new signature for the same registry, or a reload of the same bytes,
// keeps the catalog.
func TestNoMatchListsAgainAfterAReload(t *testing.T) {
	data := registrytest.Encode(40, 3)
	h := handlers(t, data)
	v, _, ok := h.Catalog(150)
	if !ok {
		t.Fatal("no catalog")
	}
	h.newMatcher = func(r *registry.Registry) matcher.Matcher { return matcher.New(r) }
	p := published{h}
	p.Publish(store.Served{Registry: h.cur.Load().reg, Signature: h.cur.Load().signature})
	if out, _ := noMatchOn(t, h, v); out.CatalogVersion == nil {
		t.Error("a new signature of the same registry dropped the catalog")
	}
	same, err := registry.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	p.Publish(store.Served{Registry: same})
	if out, _ := noMatchOn(t, h, v); out.CatalogVersion == nil || *out.CatalogVersion != v {
		t.Errorf("a reload of the same bytes dropped the catalog: %v", out.CatalogVersion)
	}
	reg, err := registry.Load(registrytest.Encode(39, 3))
	if err != nil {
		t.Fatal(err)
	}
	p.Publish(store.Served{Registry: reg})
	out, text := noMatchOn(t, h, v)
	if out.CatalogVersion != nil || shownOnce(t, out, text) != 39 || strings.Contains(text, "instructions") {
		t.Errorf("after a reload: catalog_version %v, text:\n%s", out.CatalogVersion, text)
	}
	now, _, _ := h.Catalog(150)
	if now == v || !strings.Contains(text, "The registry changed since this session began (the session's catalog is of registry "+v+", this one is "+now+")") {
		t.Errorf("the answer does not say the session's catalog (%s) is not the registry's (%s):\n%s", v, now, text)
	}
	if out, text := noMatchOn(t, h, now); out.CatalogVersion == nil || *out.CatalogVersion != now || len(out.MoreCategories) != 0 || strings.Contains(text, "changed since") {
		t.Errorf("a session begun after the reload: catalog_version %v, text:\n%s", out.CatalogVersion, text)
	}
}

// A session given a catalog, after the registry grew past the limit,
// gets the categories listed: the version it holds is no longer served.
func TestNoMatchListsOnceTheRegistryGrowsPastTheLimit(t *testing.T) {
	h := handlers(t, registrytest.Encode(40, 3))
	v, _, ok := h.Catalog(40)
	if !ok {
		t.Fatal("no catalog")
	}
	h.newMatcher = func(r *registry.Registry) matcher.Matcher { return matcher.New(r) }
	reg, err := registry.Load(registrytest.Encode(41, 3))
	if err != nil {
		t.Fatal(err)
	}
	published{h}.Publish(store.Served{Registry: reg})
	if _, _, ok := h.Catalog(40); ok {
		t.Fatal("a catalog of 41 categories past a limit of 40")
	}
	out, text := noMatchOn(t, h, v)
	if out.CatalogVersion != nil || shownOnce(t, out, text) != 41 || !strings.Contains(text, "changed since this session began") {
		t.Errorf("catalog_version %v, text:\n%s", out.CatalogVersion, text)
	}
}

// A caller whose session was given no catalog (a page, a modern request,
// a server that lists none) gets the categories listed, however small
// the registry.
func TestNoMatchListsToACallerGivenNoCatalog(t *testing.T) {
	h := handlers(t, registrytest.Encode(40, 3))
	if _, _, ok := h.Catalog(150); !ok {
		t.Fatal("no catalog")
	}
	out, text := noMatchOn(t, h, "")
	if out.CatalogVersion != nil || shownOnce(t, out, text) != 40 || strings.Contains(text, "instructions") || strings.Contains(text, "changed since") {
		t.Errorf("catalog_version %v, text:\n%s", out.CatalogVersion, text)
	}
}

// Past the limit, or with it 0, there is no catalog and the answer lists
// the categories as before.
func TestNoCatalogPastTheLimit(t *testing.T) {
	for _, max := range []int{0, 39} {
		h := handlers(t, registrytest.Encode(40, 3))
		if v, slugs, ok := h.Catalog(max); ok || v != "" || slugs != nil {
			t.Errorf("Catalog(%d) of 40: %q %v %v", max, v, slugs, ok)
		}
		out, text := noMatchOn(t, h, "")
		if out.CatalogVersion != nil || shownOnce(t, out, text) != 40 {
			t.Errorf("max %d: catalog_version %v, text:\n%s", max, out.CatalogVersion, text)
		}
	}
	if _, _, ok := handlers(t, registrytest.Encode(40, 3)).Catalog(40); !ok {
		t.Error("Catalog(40) of 40 categories refused")
	}
}

// A question that shares a word with some category gets among its
// described candidates those close to it in meaning only, in the order of
// one key with the others (listNear), each marked meaning_only and its
// line saying so, in both listings (whole, and with the catalog at hand):
// "crema" shares a word with cake-baking alone in the development set's
// registry, and is about espresso.
func TestNoMatchFillsCandidatesCloseInMeaning(t *testing.T) {
	data, err := os.ReadFile("../matcher/testdata/dev/registry.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, catalogued := range []bool{false, true} {
		h := handlers(t, data)
		ctx := context.Background()
		if catalogued {
			v, _, ok := h.Catalog(150)
			if !ok {
				t.Fatal("no catalog")
			}
			ctx = tooltable.WithCatalog(ctx, v)
		}
		_, err := h.GetSources(ctx, &gen.GetSourcesInput{Query: ptr("crema")})
		te := toolError(t, err)
		out := te.Structured.(*gen.GetSourcesOutput)
		var shared, near []string
		for _, c := range out.Candidates {
			meaningOnly := c.MeaningOnly != nil && *c.MeaningOnly
			if meaningOnly {
				near = append(near, c.Slug)
			} else {
				shared = append(shared, c.Slug)
			}
			// Each line says its kind: a near one is marked, with no score.
			at := strings.Index(te.Text, "\n- "+c.Slug+" (")
			if at < 0 {
				t.Errorf("catalogued %v: no line for %s:\n%s", catalogued, c.Slug, te.Text)
				continue
			}
			line, _, _ := strings.Cut(te.Text[at+1:], "\n")
			if strings.Contains(line, meaningOnlyMark) != meaningOnly || strings.Contains(line, ", score ") == meaningOnly {
				t.Errorf("catalogued %v: meaning only %v, line %q", catalogued, meaningOnly, line)
			}
		}
		if !slices.Equal(shared, []string{"cake-baking"}) || !slices.Contains(near, "espresso") || len(out.Candidates) > maxCandidates || (out.CatalogVersion != nil) != catalogued {
			t.Errorf("catalogued %v (catalog_version %v): sharing a word %v, close in meaning only %v; want cake-baking and espresso, at most %d in all", catalogued, out.CatalogVersion, shared, near, maxCandidates)
		}
		js, err := out.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gentest.DecodeOutput(gen.ToolGetSources, js); err != nil || !strings.Contains(string(js), `"meaning_only":true`) {
			t.Errorf("catalogued %v: structured answer %s: %v", catalogued, js, err)
		}
	}
}
