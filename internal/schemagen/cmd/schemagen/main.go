// Command schemagen regenerates gen/ from schema/. Run it through
// `go generate ./...` at the repository root.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/three-good-sources/3gs/internal/schemagen"
)

func main() {
	schemaDir := flag.String("schema", "schema", "directory holding the document schemas (*.schema.json) and tools/")
	outDir := flag.String("out", "gen", "directory to write the *_gen.go files into")
	pkg := flag.String("pkg", "gen", "Go package name of the generated files")
	flag.Parse()
	files, err := schemagen.Generate(*schemaDir, *pkg)
	if err == nil {
		err = schemagen.WriteDir(*outDir, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
