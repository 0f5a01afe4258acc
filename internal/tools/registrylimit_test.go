package tools

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
)

// A change that would make the registry file larger than
// --max-registry-bytes is refused, since the next start could not load
// the file; and reload_registry reads no more than the limit.
func TestEditsKeepToRegistryLimit(t *testing.T) {
	h, path := editable(t, nil)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h.node.Editor().MaxRegistryBytes = int64(len(before)) + 100 // less than a category
	_, err = trySQLite(h, "Learning SQLite")
	var te *gen.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Text, "--max-registry-bytes") {
		t.Fatalf("upsert past the limit: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("the refused change was written")
	}
	h.node.Editor().MaxRegistryBytes = int64(len(before)) - 1
	_, err = h.ReloadRegistry(admin, &gen.ReloadRegistryInput{})
	if !errors.As(err, &te) || !strings.Contains(te.Text, "limit") {
		t.Fatalf("reload of a file over the limit: %v", err)
	}
}
