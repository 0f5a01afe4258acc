package schemagen

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/schema"
	"github.com/three-good-sources/3gs/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the generator's current output")

// TestGolden pins the generator's output for testdata/schema, which uses
// every supported keyword. Run `go test ./internal/schemagen -update` after
// an intended change and review the golden diff.
func TestGolden(t *testing.T) {
	files, err := Generate("testdata/schema", goldenPkg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Generate("testdata/schema", goldenPkg)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "golden")
	if *update {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
	}
	var names []string
	for name, src := range files {
		names = append(names, name)
		if !bytes.Equal(src, again[name]) {
			t.Errorf("%s differs between two runs: output is not deterministic", name)
		}
		if strings.HasSuffix(name, ".go") && (!strings.HasPrefix(string(src), "// Code generated ") || !strings.Contains(strings.SplitN(string(src), "\n", 2)[0], "DO NOT EDIT.")) {
			t.Errorf("%s lacks the generated-code header", name)
		}
		golden := filepath.Join(dir, filepath.FromSlash(name)+".golden")
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, src, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Errorf("%v (run with -update to create it)", err)
			continue
		}
		if !bytes.Equal(src, want) {
			t.Errorf("%s differs from %s; run `go test ./internal/schemagen -update` if the change is intended", name, golden)
		}
	}
	slices.Sort(names)
	wantNames := []string{DocumentDecodeFile("registry"), DocumentEncodeFile("registry"), DocumentTypesFile("registry"), DocumentDecodeFile("stamp"), DocumentEncodeFile("stamp"), DocumentTypesFile("stamp"), ToolsInputDecodeFile, ToolsOutputDecodeFile, ToolsOutputEncodeFile, ToolsDispatchFile, ToolsHandlersFile, ToolsManifestFile, ToolsTiersFile, ToolsTypesFile, ContractGoFile,
		ManifestJSONFile("add_shelf"), ManifestJSONFile("count_things"), ManifestJSONFile("reset"),
		ToolsListJSONFile("public"), ToolsListJSONFile("user"), ToolsListJSONFile("admin")}
	slices.Sort(wantNames)
	if !slices.Equal(names, wantNames) {
		t.Errorf("generated %v, want %v", names, wantNames)
	}
}

// goldenPkg is the import path the golden files are generated for.
const goldenPkg = "github.com/three-good-sources/3gs/internal/schemagen/testdata/golden"

// TestGoldenCompiles builds the golden output as a package, with its
// result decoders, so the code paths only testdata/schema exercises
// (nested arrays, optional objects and booleans, enum items) are known to
// compile. gen/ holds nothing written by hand: the generated code needs
// only the module's runtime packages.
func TestGoldenCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a package with the go command")
	}
	// The package must sit inside the module to import its runtime.
	dir, err := os.MkdirTemp("testdata", "compile-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dir = filepath.Join(dir, "golden")
	files, err := Generate("testdata/schema", "github.com/three-good-sources/3gs/internal/schemagen/"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteDir(dir, files); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "vet", "./"+filepath.ToSlash(dir)+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("generated golden package does not build: %v\n%s", err, out)
	}
}

// TestGenIsFresh fails when gen/ does not match schema/, before CI's
// `go generate && git diff` would.
func TestGenIsFresh(t *testing.T) {
	root := testkit.Root()
	files, err := Generate(filepath.Join(root, "schema"), "github.com/three-good-sources/3gs/gen")
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range files {
		cur, err := os.ReadFile(filepath.Join(root, "gen", filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(cur, src) {
			t.Errorf("gen/%s is stale: run `go generate ./...` and commit the result", name)
		}
	}
	for _, glob := range generatedGlobs {
		existing, _ := filepath.Glob(filepath.Join(root, "gen", filepath.FromSlash(glob)))
		for _, path := range existing {
			rel, _ := filepath.Rel(filepath.Join(root, "gen"), path)
			if _, ok := files[filepath.ToSlash(rel)]; !ok {
				t.Errorf("gen/%s is no longer generated: run `go generate ./...`", filepath.ToSlash(rel))
			}
		}
	}
	// gen/ holds generated files and their tests only; plumbing written
	// by hand lives in internal/tooltable and internal/strictjson.
	all, _ := filepath.Glob(filepath.Join(root, "gen", "*.go"))
	for _, path := range all {
		if name := filepath.Base(path); !strings.HasSuffix(name, "_gen.go") && !strings.HasSuffix(name, "_test.go") {
			t.Errorf("gen/%s is neither generated nor a test; hand-written code goes outside gen/", name)
		}
	}
}

// copySchemas copies the repository's schema/ into a temporary directory.
func copySchemas(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	testkit.CopyTree(t, filepath.Join(testkit.Root(), "schema"), dst)
	return dst
}

// A new schema field must reach the types, the decoder and the tools/list
// payload through regeneration alone.
func TestAddedFieldFlowsEverywhere(t *testing.T) {
	dir := copySchemas(t)
	path := filepath.Join(dir, "tools", "get_sources.json")
	data, _ := os.ReadFile(path)
	anchor := `"threshold": {`
	if !bytes.Contains(data, []byte(anchor)) {
		t.Fatal("get_sources.json no longer has a threshold property to anchor the edit")
	}
	data = bytes.Replace(data, []byte(anchor), []byte(`"max_age_days": { "description": "Only sources reviewed within this many days.", "type": "integer", "minimum": 1, "maximum": 3650 },
      `+anchor), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := Generate(dir, "gen")
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]string{
		ToolsTypesFile:                  {"MaxAgeDays *int `json:\"max_age_days,omitempty,omitzero\"`"},
		ToolsInputDecodeFile:            {`case "max_age_days":`, `d.Maximum(&fp, float64(v), 3650.0)`, `"query", "slug", "max_age_days", "threshold"`},
		ManifestJSONFile("get_sources"): {`"max_age_days":{"description":"Only sources reviewed within this many days.","type":"integer","minimum":1,"maximum":3650}`},
	} {
		for _, w := range want {
			if !strings.Contains(string(files[file]), w) {
				t.Errorf("%s lacks %s", file, w)
			}
		}
	}
}

// The generator refuses what it cannot enforce, naming the file and place.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name, input, want string
	}{
		{"anyOf", `"query": {"anyOf": [{"type":"string"}]}`, `keyword "anyOf" is not supported`},
		{"oneOf on a string", `"query": {"type": "string", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}`, `keyword "oneOf" does not apply to type string`},
		{"oneOf of types", `"query": {"type": "object", "additionalProperties": false, "required": ["r"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "r": {"type": "string"}}, "oneOf": [{"type": "object"}, {"type": "string"}]}`, `keyword "type" is not supported in a oneOf branch`},
		{"oneOf of one branch", `"query": {"type": "object", "additionalProperties": false, "required": ["r"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "r": {"type": "string"}}, "oneOf": [{"required": ["a"]}]}`, `"oneOf" must list two or more branches`},
		{"oneOf branch requires nothing", `"query": {"type": "object", "additionalProperties": false, "required": ["r"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "r": {"type": "string"}}, "oneOf": [{"required": ["a"]}, {"required": []}]}`, `branch 1: "oneOf" must list two or more branches`},
		{"oneOf of an undeclared property", `"query": {"type": "object", "additionalProperties": false, "required": ["r"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "r": {"type": "string"}}, "oneOf": [{"required": ["a"]}, {"required": ["c"]}]}`, `branch 1: required property "c" is not declared`},
		{"oneOf of a required property", `"query": {"type": "object", "additionalProperties": false, "required": ["r"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "r": {"type": "string"}}, "oneOf": [{"required": ["a"]}, {"required": ["r"]}]}`, `branch 1: "r" is required by the object itself`},
		{"oneOf branch inside another", `"query": {"type": "object", "additionalProperties": false, "required": ["r"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "r": {"type": "string"}}, "oneOf": [{"required": ["a"]}, {"required": ["a", "b"]}]}`, `branches 0 and 1: one requires all the other does`},
		{"oneOf on a map", `"query": {"type": "object", "additionalProperties": {"type": "string"}, "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}`, `"oneOf" is only supported on objects with listed properties`},
		{"const", `"query": {"type": "string", "const": "x"}`, `keyword "const" is not supported`},
		{"default", `"query": {"type": "string", "default": "x"}`, `keyword "default" is not supported`},
		{"type list", `"query": {"type": ["string", "null"]}`, `every schema needs "type"`},
		{"untyped", `"query": {"description": "x"}`, `every schema needs "type"`},
		{"keyword for another type", `"query": {"type": "integer", "minLength": 1}`, `keyword "minLength" does not apply to type integer`},
		{"patternProperties", `"query": {"type": "object", "additionalProperties": false, "patternProperties": {}}`, `keyword "patternProperties" is not supported`},
		{"open object", `"query": {"type": "object", "properties": {"a": {"type": "string"}}}`, `objects must set "additionalProperties" to false`},
		{"additionalProperties true", `"query": {"type": "object", "additionalProperties": true}`, `"additionalProperties": true is not allowed`},
		{"external ref", `"query": {"$ref": "other.json#/x"}`, `$ref must point into this schema's $defs`},
		{"missing document def", `"query": {"$ref": "registry.schema.json#/$defs/nope"}`, `$ref names registry.schema.json#/$defs/nope, which does not exist`},
		{"missing def", `"query": {"$ref": "#/$defs/nothing"}`, `$ref names #/$defs/nothing, which does not exist`},
		{"missing document", `"query": {"$ref": "nope.schema.json"}`, `$ref names nope.schema.json, which is not a document schema`},
		{"nested x-go-type", `"query": {"type": "string", "x-go-type": "Query"}`, `"x-go-type" is only allowed at the root of a schema`},
		{"unknown format", `"query": {"type": "string", "format": "email"}`, `format "email" is not supported`},
		{"bad pattern", `"query": {"type": "string", "pattern": "(["}`, `pattern does not compile`},
		{"inverted range", `"query": {"type": "number", "minimum": 2, "maximum": 1}`, `minimum is greater than maximum`},
		{"array without items", `"query": {"type": "array"}`, `arrays need "items"`},
		{"required undeclared", `"query": {"type": "object", "additionalProperties": false, "required": ["nope"]}`, `required property "nope" is not declared`},
		{"inline map value", `"query": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": false}}`, `map values that are objects must be a $ref`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copySchemas(t)
			path := filepath.Join(dir, "tools", "get_sources.json")
			data, _ := os.ReadFile(path)
			start := bytes.Index(data, []byte(`"query": {`))
			end := start + bytes.Index(data[start:], []byte("},")) + 1
			edited := append(append(append([]byte{}, data[:start]...), c.input...), data[end:]...)
			if err := os.WriteFile(path, edited, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Generate(dir, "gen")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "schema/tools/get_sources.json") {
				t.Errorf("got %v\nwant an error naming schema/tools/get_sources.json and containing %q", err, c.want)
			}
		})
	}
}

func TestToolFileChecks(t *testing.T) {
	cases := []struct{ name, old, new, want string }{
		{"unknown key", `"tier": "public",`, `"tier": "public", "hidden": true,`, `unknown key "hidden"`},
		{"bad tier", `"tier": "public"`, `"tier": "root"`, `tier "root" must be one of public, user, admin`},
		{"no example", `Examples: {\"query\"`, `Such as {\"query\"`, `the description must show at least one call`},
		{"missing hint", `"openWorldHint": false`, `"x": false`, `"annotations" must list exactly`},
		{"name mismatch", `"name": "get_sources"`, `"name": "get_source"`, `so the file must be named get_source.json`},
		{"duplicate key", `"tier": "public",`, `"tier": "public", "tier": "public",`, `duplicate key "tier"`},
		{"discoverable public tool", `"tier": "public",`, `"tier": "public", "discoverable": true,`, `"discoverable" applies to user and admin tools`},
		{"discoverable not a boolean", `"tier": "public",`, `"tier": "user", "discoverable": "yes",`, `"discoverable" must be a boolean`},
		{"unknown listedWhen", `"tier": "public",`, `"tier": "public", "listedWhen": "friday",`, `"listedWhen" must be one of peers, proposals, token`},
		{"listedWhen not a string", `"tier": "public",`, `"tier": "public", "listedWhen": true,`, `"listedWhen" must be one of peers, proposals, token`},
		{"x-go-type on a tool", `"inputSchema": {`, `"inputSchema": { "x-go-type": "Lookup",`, `"x-go-type" names a document schema's type; a tool's types are named after the tool (GetSourcesInput, GetSourcesOutput)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copySchemas(t)
			path := filepath.Join(dir, "tools", "get_sources.json")
			data, _ := os.ReadFile(path)
			if !bytes.Contains(data, []byte(c.old)) {
				t.Fatalf("%q not in get_sources.json", c.old)
			}
			os.WriteFile(path, bytes.Replace(data, []byte(c.old), []byte(c.new), 1), 0o644)
			if _, err := Generate(dir, "gen"); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// A document's x-go-type must be a name Go code can use.
func TestGoTypeMustBeExported(t *testing.T) {
	dir := copySchemas(t)
	path := filepath.Join(dir, "auditentry.schema.json")
	data, _ := os.ReadFile(path)
	old := `"x-go-type": "AuditEntry"`
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s not in auditentry.schema.json", old)
	}
	os.WriteFile(path, bytes.Replace(data, []byte(old), []byte(`"x-go-type": "auditEntry"`), 1), 0o644)
	if _, err := Generate(dir, "gen"); err == nil || !strings.Contains(err.Error(), `schema/auditentry.schema.json#: "x-go-type" must be an exported Go identifier`) {
		t.Errorf("got %v", err)
	}
}

// The contract file and the README's tool section are regenerated from the
// schemas like the code; stale copies fail here as well as in CI's
// freshness check.
func TestContractAndReadmeAreFresh(t *testing.T) {
	root := testkit.Root()
	s, err := schema.Load(filepath.Join(root, "schema"))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := os.ReadFile(filepath.Join(root, "schema", "CONTRACT.md"))
	if err != nil || !bytes.Equal(cur, Contract(s)) {
		t.Error("schema/CONTRACT.md is stale: run `go generate ./...` and commit the result")
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceSection(readme, ToolReference(s))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readme, want) {
		t.Error("README.md's tool reference is stale: run `go generate ./...` and commit the result")
	}
}

// A changed parameter shows in the contract as a changed row, and nothing
// else moves.
func TestContractDiffIsSmall(t *testing.T) {
	dir := copySchemas(t)
	before, err := schema.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "tools", "get_sources.json")
	data, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(data, []byte(`"maxLength": 500`), []byte(`"maxLength": 400`), 1), 0o644)
	after, err := schema.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, b := strings.Split(string(Contract(before)), "\n"), strings.Split(string(Contract(after)), "\n")
	if len(a) != len(b) {
		t.Fatalf("%d lines became %d", len(a), len(b))
	}
	var changed []string
	for i := range a {
		if a[i] != b[i] {
			changed = append(changed, b[i])
		}
	}
	if len(changed) != 1 || !strings.Contains(changed[0], "| `query` | string | one of `query`, `slug` | at most 400 characters |") {
		t.Errorf("changed lines: %q", changed)
	}
}

// A oneOf of required sets is enforced by the decoder wherever it is, and
// stated in the contract and the README. tools/list carries it except at
// the root of an input schema, where model APIs refuse it.
func TestOneOfReachesEverything(t *testing.T) {
	s, err := schema.Load("testdata/schema")
	if err != nil {
		t.Fatal(err)
	}
	var count, shelf *schema.Tool
	for _, tool := range s.Tools {
		switch tool.Name {
		case "count_things":
			count = tool
		case "add_shelf":
			shelf = tool
		}
	}
	if bytes.Contains(count.Manifest, []byte(`"oneOf"`)) || !bytes.Contains(count.InputSchema, []byte(`"oneOf":[{"required":["room"]`)) {
		t.Errorf("count_things: a root oneOf must be left out of tools/list only:\nmanifest %s\ninput schema %s", count.Manifest, count.InputSchema)
	}
	if n := bytes.Count(shelf.Manifest, []byte(`"oneOf"`)); n != 2 {
		t.Errorf("add_shelf: a nested oneOf must stay in tools/list (in both schemas), found %d:\n%s", n, shelf.Manifest)
	}
	contract := string(Contract(s))
	for _, want := range []string{
		"| `room` | string | one of `room`, both `lat` and `lon` |",
		"Give exactly one of `room` or both `lat` and `lon`: a call with neither or both is refused with -32602 (invalid params), whose message says so and how to choose. Room counts in one room. The server enforces the rule, but tools/list leaves it out of `inputSchema`",
		"| `shelves.{key}.keeper.email` | string | one of `email`, `phone` |",
		"`shelves.{key}.keeper` holds exactly one of `email` or `phone`. Email reaches them by mail; phone by telephone.",
	} {
		if !strings.Contains(contract, want) {
			t.Errorf("the contract lacks %q", want)
		}
	}
	if ref := string(ToolReference(s)); !strings.Contains(ref, "| `count_things` | user | `what`, `exact` (optional), `limit` (optional), `room` or both `lat` and `lon` (exactly one) |") {
		t.Errorf("README tool reference:\n%s", ref)
	}
}
