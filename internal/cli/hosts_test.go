package cli

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/three-good-sources/3gs/internal/mcpb"
	"github.com/three-good-sources/3gs/internal/testkit"
)

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

// server.json follows the MCP Registry's schema and the rules its code
// adds (internal/mcpb.RegistryProblems), lists the image and one bundle per
// platform at its own version, and every environment variable and
// argument it offers is one 3gs reads.
//
// Its bundles' fileSha256 are mcpb.Placeholder: a digest exists only once a
// release is built, and the release's copy of server.json, with the real
// digests, is made from this one by mcpbgen serverjson
// (internal/mcpb.StampServerJSON, tested there against the same schema).
// The placeholder fits the schema's pattern, so this file is checked in
// full; publishing it as it is would list downloads that fail their
// check, which is why the release never does.
func TestServerJSON(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testkit.Root(), "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	schema := testkit.ServerSchema(t)
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("server.json does not follow the registry schema: %v", err)
	}
	if problems := mcpb.RegistryProblems(data); len(problems) > 0 {
		t.Errorf("the registry would refuse server.json: %v", problems)
	}
	// The validator is not vacuous: a name without a namespace and a
	// digest that is not one are refused.
	for _, bad := range []struct{ old, new string }{
		{`"fileSha256": "` + mcpb.Placeholder + `"`, `"fileSha256": "to be filled in"`},
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
		Description string
		Version     string
		Packages    []struct {
			RegistryType         string
			Identifier           string
			Version              string
			FileSHA256           string
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
	if sj.Description != mcpb.Description {
		t.Errorf("server.json describes 3gs as %q, the bundles as %q", sj.Description, mcpb.Description)
	}
	serve := serveEnv()
	bundles := map[mcpb.Platform]bool{}
	for _, p := range sj.Packages {
		switch p.RegistryType {
		case "oci":
			if want := "ghcr.io/three-good-sources/3gs:" + sj.Version; p.Identifier != want {
				t.Errorf("image %s, want %s", p.Identifier, want)
			}
		case "mcpb":
			v, plat, err := mcpb.ParseBundleName(path.Base(p.Identifier))
			switch {
			case err != nil:
				t.Error(err)
			case v != sj.Version || p.Version != sj.Version || p.Identifier != mcpb.ReleaseURL(sj.Version, plat):
				t.Errorf("bundle %s (version %s) is not the %s bundle of %s", p.Identifier, p.Version, plat, sj.Version)
			case p.FileSHA256 != mcpb.Placeholder:
				t.Errorf("%s: fileSha256 %s is a real digest, which only a release's server.json has; write the placeholder", plat, p.FileSHA256)
			case bundles[plat]:
				t.Errorf("%s is listed twice", plat)
			}
			bundles[plat] = true
		}
		if p.Transport.Type != "stdio" {
			t.Errorf("package %s: transport %s", p.Identifier, p.Transport.Type)
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
	for _, p := range mcpb.Platforms {
		if !bundles[p] {
			t.Errorf("server.json lists no %s bundle", p)
		}
	}
}
