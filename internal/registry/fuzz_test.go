package registry_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/strictjson"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// FuzzLoad: whatever a registry file holds, Load either lists problems
// (each with a reason) or returns a registry every reader can rely on:
// categories in slug order, exactly three sources ranked 1 to 3, patterns
// the matcher can use, and a document that encodes and loads back to
// itself. The matcher then builds from it and answers its own patterns.
func FuzzLoad(f *testing.F) {
	f.Add(frozen.Registry(frozen.Basic))
	f.Add([]byte(`{"version":"1.0.0","updated":"2026-11-21","curator":{"name":"C","pubkey":"pk:placeholder"},"endorsements":[],"categories":{}}`))
	f.Add([]byte(`{"version":"1.0.0","categories":{"a":{"sources":[]}},"categories":{}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := registry.Load(data)
		if err != nil {
			var errs strictjson.Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("an error without problems listed: %v", err)
			}
			for _, e := range errs {
				if e.Reason == "" {
					t.Fatalf("a problem without a reason at %q", e.Path)
				}
			}
			return
		}
		cats := reg.Categories()
		if !slices.IsSortedFunc(cats, func(a, b registry.Category) int { return strings.Compare(a.Slug, b.Slug) }) {
			t.Fatal("categories are not in slug order")
		}
		for _, c := range cats {
			if len(c.Sources) != 3 {
				t.Fatalf("%s has %d sources", c.Slug, len(c.Sources))
			}
			for i, s := range c.Sources {
				if s.Rank != i+1 {
					t.Fatalf("%s: source %d has rank %d", c.Slug, i, s.Rank)
				}
			}
			for _, p := range c.QueryPatterns {
				if len(textnorm.Tokens(p)) == 0 {
					t.Fatalf("%s: pattern %q has no words", c.Slug, p)
				}
			}
		}
		doc := reg.Document()
		again, err := registry.Load(gen.EncodeRegistry(&doc))
		if err != nil {
			t.Fatalf("the encoded document does not load: %v", err)
		}
		if d2 := again.Document(); !reflect.DeepEqual(doc, d2) {
			t.Fatalf("encode → load changed the document:\n%+v\n%+v", doc, d2)
		}
		m := matcher.New(reg)
		for _, c := range cats {
			if _, err := m.Match(c.QueryPatterns[0], 3); err != nil {
				t.Fatalf("%s: its own pattern %q: %v", c.Slug, c.QueryPatterns[0], err)
			}
		}
	})
}
