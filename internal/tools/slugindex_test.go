package tools

import (
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
)

// The slug index finds every category the registry's own search finds,
// the same one, and nothing for a slug it does not hold.
func TestSlugIndex(t *testing.T) {
	for _, n := range []int{1, 3, 1000} {
		reg, err := registry.LoadLimit(gen.EncodeRegistry(registrytest.Generate(n, 1)), 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		ix := newSlugIndex(reg.Categories())
		for _, c := range reg.Categories() {
			want, _ := reg.Category(c.Slug)
			if got := ix.category(c.Slug); got != want {
				t.Fatalf("%d categories: %s found as %v", n, c.Slug, got)
			}
			if got := ix.category(c.Slug + "-x"); got != nil {
				t.Fatalf("%d categories: %s-x found as %s", n, c.Slug, got.Slug)
			}
		}
	}
	if c := newSlugIndex(nil).category("a"); c != nil {
		t.Errorf("an empty registry's index found %s", c.Slug)
	}
}
