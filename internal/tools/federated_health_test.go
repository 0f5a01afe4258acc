package tools

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
)

// An endorsed curator's signed health file shows on its sources in
// get_federated_sources, as its own check: the structured health and a
// line in the text. A peer that publishes none shows none.
func TestFederatedShowsPeersHealth(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	f := newFederationOf(t, 2, func(i int, key ed25519.PrivateKey) peerStub {
		data, sig := peerRegistry(t, key, i, 3)
		st := peerStub{data: data, sig: sig}
		if i == 0 {
			at := now.Add(-time.Hour).UTC().Truncate(time.Second)
			doc := &gen.Sourcehealth{CheckedAt: at, RegistryVersion: "1.0.0", Summary: gen.SourcehealthSummary{Gone: 1},
				Sources: []gen.CheckedSource{{Category: "bread-coffee-0", Rank: 2, URL: "https://p0.example/bread-coffee-0/2", Status: gen.CheckStatusGone, CheckedAt: at}}}
			st.health = sourcehealth.Sign(doc, key, now, sourcehealth.Validity(0))
		}
		return st
	})
	out, err := f.h.GetFederatedSources(context.Background(), &gen.GetFederatedSourcesInput{Query: "bread coffee"})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range out.Results {
		for _, s := range r.Sources {
			if s.Health == nil {
				continue
			}
			checked++
			if s.URL != "https://p0.example/bread-coffee-0/2" || s.Health.Status != gen.CheckStatusGone {
				t.Errorf("health on %s: %+v", s.URL, s.Health)
			}
		}
	}
	if checked != 1 {
		t.Fatalf("%d sources with health, want the 1 the signed file names: %+v", checked, out.Results)
	}
	text := f.h.GetFederatedSourcesText(out)
	if !strings.Contains(text, "Health: last checked 1 hour ago: gone (this curator's own check)") {
		t.Errorf("the text does not show the peer's check:\n%s", text)
	}
}

// A result whose three sources were all gone says so before anything
// else of it.
func TestFederatedAllGoneSaidFirst(t *testing.T) {
	gone := &gen.SourceHealth{Status: gen.CheckStatusGone, CheckedAt: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}
	r := gen.FederatedResult{Trust: gen.TrustOwn, Curator: gen.Curator{Name: "Us", Pubkey: "pk:x"}, Slug: "s", Name: "N", Description: "D", RegistryVersion: "1.0.0"}
	for i := 1; i <= 3; i++ {
		r.Sources = append(r.Sources, gen.FederatedSource{Rank: i, Name: "n", URL: "https://x.example/", Type: "book", Why: "w", Health: gone})
	}
	h := &Handlers{}
	text := h.GetFederatedSourcesText(&gen.GetFederatedSourcesOutput{Query: "q", Results: []gen.FederatedResult{r}})
	warn := strings.Index(text, "Warning: all 3 sources of this category were gone")
	if warn < 0 || warn > strings.Index(text, "Category: N") {
		t.Errorf("the warning is not before the category:\n%s", text)
	}
	r.Sources[1].Health = &gen.SourceHealth{Status: gen.CheckStatusOk, CheckedAt: gone.CheckedAt}
	if text := h.GetFederatedSourcesText(&gen.GetFederatedSourcesOutput{Query: "q", Results: []gen.FederatedResult{r}}); strings.Contains(text, "Warning: all") {
		t.Errorf("warned with a source ok:\n%s", text)
	}
}
