package sourcehealth

import (
	"slices"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/linkcheck"
	"github.com/three-good-sources/3gs/internal/registry"
)

// Targets are every source of reg, by category slug then rank: what a
// check of the registry's sources checks.
func Targets(reg *registry.Registry) []linkcheck.Target {
	var out []linkcheck.Target
	for _, c := range reg.Categories() {
		srcs := slices.Clone(c.Sources)
		slices.SortStableFunc(srcs, func(a, b gen.Source) int { return a.Rank - b.Rank })
		for _, s := range srcs {
			out = append(out, linkcheck.Target{Category: c.Slug, Rank: s.Rank, URL: s.URL})
		}
	}
	return out
}
