// Command schemagen regenerates gen/ from schema/. Run it through
// `go generate ./...` at the repository root.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/schema"
	"github.com/three-good-sources/3gs/internal/schemagen"
)

func main() {
	schemaDir := flag.String("schema", "schema", "directory holding contract.json, the document schemas (*.schema.json) and tools/")
	outDir := flag.String("out", "gen", "directory to write the generated files into (*_gen.go, gentest/ and manifest/)")
	pkg := flag.String("pkg", "github.com/three-good-sources/3gs/gen", "import path of the generated package, whose last element is its name")
	contract := flag.String("contract", "", "file to write the readable contract to (e.g. schema/CONTRACT.md); none: not written")
	readme := flag.String("readme", "", "file whose tool-reference section to regenerate (e.g. README.md); none: not touched")
	flag.Parse()
	if err := run(*schemaDir, *outDir, *pkg, *contract, *readme); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(schemaDir, outDir, pkg, contract, readme string) error {
	files, err := schemagen.Generate(schemaDir, pkg)
	if err != nil {
		return err
	}
	if err := schemagen.WriteDir(outDir, files); err != nil {
		return err
	}
	surface, err := schema.Load(schemaDir)
	if err != nil {
		return err
	}
	if contract != "" {
		if err := writeIfChanged(contract, schemagen.Contract(surface)); err != nil {
			return err
		}
	}
	if readme != "" {
		doc, err := os.ReadFile(readme)
		if err != nil {
			return err
		}
		updated, err := schemagen.ReplaceSection(doc, schemagen.ToolReference(surface))
		if err != nil {
			return fmt.Errorf("%s: %w", readme, err)
		}
		if err := writeIfChanged(readme, updated); err != nil {
			return err
		}
	}
	return nil
}

// writeIfChanged leaves a file and its mtime alone when nothing changed.
func writeIfChanged(path string, data []byte) error {
	if cur, err := os.ReadFile(path); err == nil && string(cur) == string(data) {
		return nil
	}
	return safefile.Write(path, data, 0o644)
}
