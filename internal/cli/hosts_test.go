package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/three-good-sources/3gs/internal/fixture"
)

// serverSchema compiles the official MCP Registry schema for server.json,
// checked in at testdata/server.schema.json.
func serverSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join(fixture.Root(), "testdata", "server.schema.json"))
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

// serveEnv maps the environment variables serve reads to their defaults:
// its flags' twins, and the two it reads without a flag.
func serveEnv() map[string]string {
	f := newFlags(command{name: "serve", flags: serveFlags}, &Env{Stderr: os.Stderr, Getenv: func(string) string { return "" }})
	env := map[string]string{stdioTokenEnv: "", secretKeyEnv: ""}
	for name, twin := range f.twins {
		env[twin] = f.defs[name]
	}
	return env
}

// server.json follows the MCP Registry's schema, and every environment
// variable and argument it offers is one 3gs reads.
func TestServerJSON(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixture.Root(), "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	schema := serverSchema(t)
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("server.json does not follow the registry schema: %v", err)
	}
	// The validator is not vacuous: a pinned version of "latest" and a
	// name without a namespace are refused.
	for _, bad := range []struct{ old, new string }{
		{`"identifier": "github.com/three-good-sources/3gs/cmd/3gs",
      "version": "0.1.0"`, `"identifier": "github.com/three-good-sources/3gs/cmd/3gs",
      "version": "latest"`},
		{`"name": "io.github.three-good-sources/3gs"`, `"name": "3gs"`},
	} {
		if !strings.Contains(string(data), bad.old) {
			t.Fatalf("server.json lacks %q", bad.old)
		}
		mutated, _ := jsonschema.UnmarshalJSON(strings.NewReader(strings.Replace(string(data), bad.old, bad.new, 1)))
		if schema.Validate(mutated) == nil {
			t.Errorf("the schema accepted %s", bad.new)
		}
	}

	var sj struct {
		Version  string
		Packages []struct {
			Version              string
			Transport            struct{ Type string }
			PackageArguments     []struct{ Type, Value string }
			EnvironmentVariables []struct {
				Name    string
				Default string
				Choices []string
			}
		}
	}
	if err := json.Unmarshal(data, &sj); err != nil {
		t.Fatal(err)
	}
	serve := serveEnv()
	for _, p := range sj.Packages {
		if p.Transport.Type != "stdio" || p.Version != sj.Version {
			t.Errorf("package %+v", p)
		}
		for _, a := range p.PackageArguments {
			if _, ok := find([]string{a.Value}); a.Type != "positional" || !ok {
				t.Errorf("argument %q is not a 3gs command", a.Value)
			}
		}
		for _, e := range p.EnvironmentVariables {
			def, ok := serve[e.Name]
			switch {
			case !ok:
				t.Errorf("%s is not an environment variable 3gs serve reads", e.Name)
			case e.Default != "" && e.Default != def:
				t.Errorf("%s: server.json says the default is %q, 3gs says %q", e.Name, e.Default, def)
			case len(e.Choices) > 0 && !slices.Contains(e.Choices, def):
				t.Errorf("%s: the default %q is not among the choices %v", e.Name, def, e.Choices)
			}
		}
	}
}
