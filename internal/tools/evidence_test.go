package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
)

// A query that shares nothing with any category gets no candidates, no
// closest and no alternatives; the answer says so and lists the whole
// catalog in its order, never "closest first".
func TestNoEvidenceListsNoCandidates(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	_, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("knitting patterns for beginners")})
	te := toolError(t, err)
	out := te.Structured.(*gen.GetSourcesOutput)
	if len(out.Candidates) != 0 || out.Closest != nil || len(out.Alternatives) != 0 {
		t.Errorf("candidates %+v, closest %+v, alternatives %+v; want none", out.Candidates, out.Closest, out.Alternatives)
	}
	if !strings.Contains(te.Text, "No category shares anything with it") || strings.Contains(te.Text, "closest") ||
		!strings.Contains(te.Text, fmt.Sprintf("The registry's %d categories, in catalog order:", frozen.BasicCategories)) {
		t.Errorf("text:\n%s", te.Text)
	}
	var listed []string
	for _, c := range out.MoreCategories {
		listed = append(listed, c.Slug)
	}
	if len(listed) != frozen.BasicCategories || !slices.IsSorted(listed) || shownOnce(t, out, te.Text) != frozen.BasicCategories {
		t.Errorf("listed %v, want all %d in catalog (slug) order", listed, frozen.BasicCategories)
	}
}

// A query that shares a word with one category offers that one, and only
// it, as a candidate: the others follow in catalog order.
func TestEvidenceListsItsCandidates(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	_, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("quantum chromodynamics in rust")})
	te := toolError(t, err)
	out := te.Structured.(*gen.GetSourcesOutput)
	if len(out.Candidates) != 1 || out.Candidates[0].Slug != "rust-learning" || out.Closest == nil || out.Closest.Slug != "rust-learning" {
		t.Fatalf("candidates %+v, closest %+v; want rust-learning alone", out.Candidates, out.Closest)
	}
	if !strings.Contains(te.Text, fmt.Sprintf("The registry's %d categories, the 1 that share words with the query first, closest first, then the others:\n- rust-learning (", frozen.BasicCategories)) ||
		strings.Contains(te.Text, "No category shares") || shownOnce(t, out, te.Text) != frozen.BasicCategories {
		t.Errorf("text:\n%s", te.Text)
	}
}

// In a registry too large to list whole, a query with no evidence still
// gets no candidates, and the answer never calls what it lists close:
// the faint signs the matcher saw choose which to show first, and the
// answer says that is all they are.
func TestNoEvidenceInALargeRegistry(t *testing.T) {
	h := handlers(t, registrytest.Encode(400, 3))
	_, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("zzqx quantum chromodynamics")})
	te := toolError(t, err)
	out := te.Structured.(*gen.GetSourcesOutput)
	if len(out.Candidates) != 0 || out.Closest != nil || strings.Contains(te.Text, "closest") || !strings.Contains(te.Text, "No category shares anything with it") ||
		!strings.Contains(te.Text, " of the registry's 400 categories, none sharing a word with the query:\n"+hintsLabel[1:]) || len(te.Text) > answerBudget {
		t.Errorf("%d candidates, closest %+v, %d bytes:\n%s", len(out.Candidates), out.Closest, len(te.Text), te.Text)
	}
	shownOnce(t, out, te.Text)
	if n := partialListing(t, out, te.Text); n < 30 {
		t.Errorf("listed %d categories", n)
	}
}
