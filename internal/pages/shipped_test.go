package pages_test

import (
	"context"
	"testing"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/pages"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/tools"
)

// homeBudget is the most bytes the home page may take for the shipped
// registry: small enough for a slow phone connection.
const homeBudget = 60 << 10

// TestShippedHomeSize: its subject is the shipped registry.json, whose
// home page must stay under homeBudget as curators add categories.
func TestShippedHomeSize(t *testing.T) {
	reg, err := registry.Load(threegs.DefaultRegistry)
	if err != nil {
		t.Fatal(err)
	}
	h := tools.New(tools.Config{Registry: reg, Matcher: matcher.New(reg), Threshold: tools.DefaultThreshold, Signature: signature.Check(reg, threegs.DefaultSignature)})
	site := pages.New(pages.Config{Tools: h})
	page, err := site.Home(context.Background(), pages.Links{}, 1, "http://127.0.0.1:3000")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("/ for the shipped registry (%d categories): %d bytes", len(reg.Categories()), len(page))
	if len(page) >= homeBudget {
		t.Errorf("/ is %d bytes for the shipped registry, over the %d-byte budget", len(page), homeBudget)
	}
}
