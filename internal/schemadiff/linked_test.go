package schemadiff

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// generatorOnly are packages only the code generator needs. 3gs schema
// diff reads schemas through internal/schema, which uses the standard
// library alone; if an import brings one of these back into the server
// binary, it grows by megabytes of code it never runs (28.1 MB before
// internal/schema was split out of internal/schemagen, 26.6 MB after).
var generatorOnly = []string{
	"github.com/three-good-sources/3gs/internal/schemagen",
	"github.com/dave/jennifer",
	"github.com/atombender/go-jsonschema",
	"github.com/goccy/go-yaml",
	"github.com/santhosh-tekuri/jsonschema",
	"golang.org/x/tools",
}

func TestServerBinaryLinksNoGenerator(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./cmd/3gs")
	cmd.Dir = testkit.Root()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/3gs: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, g := range generatorOnly {
			if pkg == g || strings.HasPrefix(pkg, g+"/") {
				t.Errorf("cmd/3gs links %s, which only the code generator needs; find the import with: go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/3gs | grep %s", pkg, g)
			}
		}
	}
}
