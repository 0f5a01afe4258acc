package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/tooltable"
)

// catalogBytes asks reg every question of cases, as a session without the
// catalog and as one whose instructions carry it (Catalog(150)), and
// returns the text bytes of the not-confident first answers of each, and
// how many on-topic not-confident answers name the right category
// (described, or in the catalog) in each.
func catalogBytes(t *testing.T, reg *registry.Registry, cases []evalset.Case) (without, with []int, rightWithout, rightWith, n int) {
	t.Helper()
	plain := New(Config{Registry: reg, Matcher: matcher.New(reg), Threshold: DefaultThreshold})
	given := New(Config{Registry: reg, Matcher: matcher.New(reg), Threshold: DefaultThreshold})
	v, _, catalogued := given.Catalog(150)
	ctxs := [2]context.Context{context.Background(), tooltable.WithCatalog(context.Background(), v)}
	for _, c := range cases {
		var answers [2]string
		for i, h := range []*Handlers{plain, given} {
			_, err := h.GetSources(ctxs[i], &gen.GetSourcesInput{Query: ptr(c.Query)})
			var te *gen.ToolError
			if !errors.As(err, &te) {
				break
			}
			answers[i] = te.Text
		}
		if answers[0] == "" {
			continue
		}
		without, with = append(without, len(answers[0])), append(with, len(answers[1]))
		if c.OnTopic() {
			n++
			if lists(answers[0], c.Want) {
				rightWithout++
			}
			if lists(answers[1], c.Want) || catalogued && strings.Contains(answers[1], "catalog of categories in this server's instructions") {
				rightWith++
			}
		}
	}
	return without, with, rightWithout, rightWith, n
}

func pcts(b []int) string {
	s := slices.Clone(b)
	slices.Sort(s)
	if len(s) == 0 {
		return "none"
	}
	at := func(q float64) int { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return fmt.Sprintf("p50 %d, p95 %d", at(0.5), at(0.95))
}

// TestCatalogFirstAnswerBytes measures what the catalog at hand saves: the
// not-confident first answers' text bytes on every set and blend, without
// and with the catalog in the instructions. With it, an answer's text
// must be smaller, and still lead to the right category wherever the
// answer without it did.
func TestCatalogFirstAnswerBytes(t *testing.T) {
	check := func(t *testing.T, reg *registry.Registry, cases []evalset.Case) {
		without, with, rw, rc, n := catalogBytes(t, reg, cases)
		t.Logf("%d categories, %d not confident: text bytes without the catalog %s, with it %s; on-topic led to the right category %d → %d of %d",
			len(reg.Categories()), len(without), pcts(without), pcts(with), rw, rc, n)
		for i := range without {
			if len(reg.Categories()) <= 150 && with[i] >= without[i] {
				t.Errorf("answer %d: %d bytes with the catalog, %d without", i, with[i], without[i])
			}
		}
		if rc < rw {
			t.Errorf("with the catalog %d led to the right category, without it %d", rc, rw)
		}
	}
	for _, set := range evalset.Sets("../..") {
		t.Run(set.Name, func(t *testing.T) {
			reg, cases := loadSet(t, set)
			check(t, reg, cases)
		})
	}
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
			check(t, reg, l.Cases)
		})
	}
}
