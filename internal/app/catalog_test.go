package app

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/registry/registrytest"
)

// A served registry of at most CatalogMax categories has every slug in
// the instructions; past it, or with CatalogMax 0, none.
func TestInstructionsCarryASmallRegistrysCatalog(t *testing.T) {
	for _, c := range []struct {
		max  int
		want bool
	}{{150, true}, {40, true}, {39, false}, {0, false}} {
		cfg := testConfig(t)
		if err := os.WriteFile(cfg.Registry, registrytest.Encode(40, 3), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg.CatalogMax = c.max
		srv, err := Start(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ins := srv.MCP.Instructions()
		v, slugs, _ := srv.Tools.Catalog(1000)
		has := strings.Contains(ins, "Categories (registry "+v+")")
		for _, s := range slugs {
			if strings.Contains(ins, s) != c.want {
				has = !c.want
			}
		}
		if has != c.want || len(slugs) != 40 {
			t.Errorf("CatalogMax %d: catalog in the instructions %v, want %v:\n%s", c.max, has, c.want, ins)
		}
		srv.Close()
	}
}
