// Package benchtools is what the benchmark commands share: the comparison
// servers get 3gs's own tool logic, so a benchmark compares protocol and
// transport handling and nothing else, and the drivers pick the registry
// and build the servers the same way.
package benchtools

import (
	"encoding/json"
	"log"
	"os"
	"os/exec"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/tools"
)

// Handlers are 3gs's tools over the registry at path (the embedded one
// when empty), as `3gs serve` builds them.
func Handlers(path string) *tools.Handlers {
	var reg *registry.Registry
	var err error
	if path != "" {
		reg, err = registry.LoadFile(path)
	} else {
		reg, err = registry.Load(threegs.DefaultRegistry)
	}
	if err != nil {
		log.Fatal(err)
	}
	return tools.New(tools.Config{Registry: reg, Matcher: matcher.New(reg), Threshold: tools.DefaultThreshold})
}

// Manifest is the part of a tool's tools/list entry a server library
// needs to register it.
type Manifest struct {
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// ManifestOf reads t's generated manifest.
func ManifestOf(t gen.Tool) Manifest {
	var m Manifest
	if err := json.Unmarshal([]byte(t.Manifest), &m); err != nil {
		log.Fatal(err)
	}
	return m
}

// Registry is the registry flag's value when that file exists; otherwise,
// after saying so, empty, which means 3gs's embedded registry.
func Registry(path string) string {
	if path == "" {
		return ""
	}
	if _, err := os.Stat(path); err != nil {
		log.Printf("registry %s not found; using 3gs's embedded registry", path)
		return ""
	}
	return path
}

// Build runs a go build command, stopping the benchmark if it fails.
func Build(cmd *exec.Cmd) {
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("%v: %v", cmd.Args, err)
	}
}
