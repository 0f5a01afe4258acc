package matcher

import (
	"testing"

	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/registry"
)

func frozenBasic(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(frozen.Registry(frozen.Basic))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// grounded is the slugs of ranked with evidence, and how many it ranks.
func grounded(ranked []Scored) (slugs []string, n int) {
	for _, r := range ranked {
		if r.Grounded {
			slugs = append(slugs, r.Slug)
		}
	}
	return slugs, len(ranked)
}

// A query that shares no word with the registry still gets scores (the
// calibration keeps them above zero, and "patterns" is in a source's
// why-line), but no category is grounded.
func TestNoSharedWordIsNotGrounded(t *testing.T) {
	x := New(frozenBasic(t))
	for _, q := range []string{"knitting patterns for beginners", "quantum chromodynamics"} {
		ranked, err := x.Match(q, 5)
		if g, n := grounded(ranked); err != nil || n == 0 || len(g) != 0 {
			t.Errorf("%q: %v; %d ranked, grounded %v; want some ranked, none grounded", q, err, n, g)
		}
	}
}

// A word the curator wrote about the category grounds it, and only it:
// "rust" grounds rust-learning, not the categories the rest reaches.
func TestSharedWordGrounds(t *testing.T) {
	x := New(frozenBasic(t))
	ranked, err := x.Match("quantum chromodynamics in rust", 5)
	if g, n := grounded(ranked); err != nil || len(g) != 1 || g[0] != "rust-learning" || n < 2 {
		t.Errorf("grounded %v of %d ranked (%v), want rust-learning alone of several", g, n, err)
	}
}

// A source's name is what the curator chose for the category: "docker"
// grounds the mail server whose source is docker-mailserver.
func TestSourceNameGrounds(t *testing.T) {
	x := New(frozenBasic(t))
	ranked, err := x.Match("docker", 3)
	if g, _ := grounded(ranked); err != nil || len(g) == 0 || g[0] != "self-hosted-email" {
		t.Errorf("grounded %v (%v), want self-hosted-email", g, err)
	}
}

// A query of generic words only has nothing else to share: the categories
// whose curated words hold them are grounded.
func TestGenericOnlyQueryGrounds(t *testing.T) {
	x := New(frozenBasic(t))
	ranked, err := x.Match("beginner guide", 5)
	if g, _ := grounded(ranked); err != nil || len(g) == 0 {
		t.Errorf("%v, %v: want some grounded", ranked, err)
	}
}

// The baseline grounds a category when a query word is a whole word of
// its slug, name or patterns; its similarity alone is not evidence.
func TestBaselineGrounded(t *testing.T) {
	b := NewBaseline(frozenBasic(t))
	ranked, err := b.Match("quantum chromodynamics", 3)
	if g, n := grounded(ranked); err != nil || n == 0 || len(g) != 0 {
		t.Errorf("quantum chromodynamics: grounded %v of %d (%v), want none of some", g, n, err)
	}
	ranked, err = b.Match("learn rust", 3)
	if err != nil || len(ranked) == 0 || ranked[0].Slug != "rust-learning" || !ranked[0].Grounded {
		t.Errorf("learn rust: %v (%v), want rust-learning grounded first", ranked, err)
	}
}
