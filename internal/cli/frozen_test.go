package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/signature"
)

// frozenRegistry writes the frozen registry Basic into a new directory,
// signed by frozen.TestKey with an expiry as 3gs sign signs (serve refuses
// the frozen signature's form without one), and returns its path. The tests of the
// commands query, serve and validate this file, never the shipped
// registry.json (nor the copy embedded in the binary): a curator's edit
// of that one breaks only the tests of the shipped registry itself (see
// docs/development.md, "When registry.json changes").
func frozenRegistry(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registry.json")
	if err := os.WriteFile(path, frozen.Registry(frozen.Basic), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".sig", signature.Sign(frozen.Registry(frozen.Basic), frozen.TestKey(), time.Now()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// frozenCurator is the curator name of the frozen registries.
const frozenCurator = "3gs tests (TEST KEY: public, never trusted)"
