package testkit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ServerSchema compiles the MCP Registry's schema for server.json, the
// copy checked in at testdata/server.schema.json, with formats asserted.
func ServerSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join(Root(), "testdata", "server.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const url = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
