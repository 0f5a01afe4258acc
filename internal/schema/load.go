package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

const (
	documentSuffix = ".schema.json"
	toolsSchemaDir = "tools"
)

// document is a file format 3gs reads, such as registry.json: a schema at
// the top of the schema directory whose root becomes a Go type named after
// the file (registry.schema.json → Registry) with a strict decoder.
type Document struct {
	Name     string // file name without .schema.json
	Path     string // for messages and headers, with forward slashes
	RootType string
	Tree     any
	Node     *Node
	// Deps are the documents whose $defs this one refers into.
	Deps []string
}

func readDocuments(schemaDir string) (Documents, error) {
	paths, err := filepath.Glob(filepath.Join(schemaDir, "*"+documentSuffix))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var docs Documents
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		d := Document{Name: strings.TrimSuffix(filepath.Base(path), documentSuffix)}
		d.Path = filepath.ToSlash(filepath.Join("schema", filepath.Base(path)))
		if !documentName.MatchString(d.Name) {
			return nil, fmt.Errorf("%s: document schema names must be lower-case letters, e.g. registry.schema.json", d.Path)
		}
		if d.Tree, err = ParseTree(data); err != nil {
			return nil, fmt.Errorf("%s: %w", d.Path, err)
		}
		d.Deps = externalDocs(d.Tree, nil)
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no document schemas (*%s) in %s", documentSuffix, schemaDir)
	}
	return docs, docs.parse()
}

// parse parses each document's tree once the documents it refers into
// (Deps) are parsed: a document may use another's $defs (the proposals
// file a registry's category), never its own root or in a cycle.
func (ds Documents) parse() error {
	for left := len(ds); left > 0; {
		progress := false
		for i := range ds {
			d := &ds[i]
			if d.Node != nil || !ds.parsed(d.Deps) {
				continue
			}
			if slices.Contains(d.Deps, d.Name) {
				return fmt.Errorf("%s: a document refers to its own $defs as #/$defs/NAME, not through its file name", d.Path)
			}
			var err error
			if d.Node, err = parseSchema(d.Path, "", d.Tree, ds.defs); err != nil {
				return err
			}
			d.RootType = d.Node.GoType
			if d.RootType == "" {
				d.RootType = strings.ToUpper(d.Name[:1]) + d.Name[1:]
			}
			if d.Node.Type != "object" || d.Node.IsMap() {
				return fmt.Errorf("%s: a document must be an Object with listed properties", d.Path)
			}
			left--
			progress = true
		}
		if !progress {
			var stuck []string
			for _, d := range ds {
				if d.Node == nil {
					stuck = append(stuck, d.Path+" (refers to "+strings.Join(d.Deps, ", ")+")")
				}
			}
			return fmt.Errorf("document schemas that refer to each other in a cycle, or to a document that does not exist: %s", strings.Join(stuck, "; "))
		}
	}
	return nil
}

// InOrder is the documents with each after those it refers into, for a
// generator that must have read a document before one that uses it; the
// order is otherwise by name. parse has refused a cycle.
func (ds Documents) InOrder() Documents {
	var out Documents
	done := map[string]bool{}
	var visit func(d *Document)
	visit = func(d *Document) {
		if done[d.Name] {
			return
		}
		done[d.Name] = true
		for _, dep := range d.Deps {
			if x := ds.find(dep); x != nil {
				visit(x)
			}
		}
		out = append(out, *d)
	}
	for i := range ds {
		visit(&ds[i])
	}
	return out
}

// parsed reports whether every document named is parsed.
func (ds Documents) parsed(names []string) bool {
	for _, n := range names {
		if d := ds.find(n); d == nil || d.Node == nil {
			return false
		}
	}
	return true
}

// externalDocs adds to into the documents tree refers into with $ref
// (registry.schema.json#/$defs/category), each once.
func externalDocs(tree any, into []string) []string {
	switch t := tree.(type) {
	case *Object:
		for _, k := range t.Keys {
			if ref, ok := t.Vals[k].(string); ok && k == "$ref" {
				if m := ExternalRef.FindStringSubmatch(ref); m != nil && !slices.Contains(into, m[1]) {
					into = append(into, m[1])
				}
				continue
			}
			into = externalDocs(t.Vals[k], into)
		}
	case []any:
		for _, v := range t {
			into = externalDocs(v, into)
		}
	}
	return into
}

var documentName = regexp.MustCompile(`^[a-z]+$`)

// Documents are the document schemas a tool schema may refer into.
type Documents []Document

func (ds Documents) find(name string) *Document {
	for i := range ds {
		if ds[i].Name == name {
			return &ds[i]
		}
	}
	return nil
}

// defs resolves a tool schema's references into document schemas: to
// $defs entry def, or to the document's root when def is empty.
func (ds Documents) defs(doc, def string) *Node {
	d := ds.find(doc)
	switch {
	case d == nil:
		return nil
	case def == "":
		return d.Node
	}
	return d.Node.Defs[def]
}

// defTree is the tree of a document's $defs entry, nil when absent; with
// def empty, that of its root without the keywords only a root may have.
func (ds Documents) defTree(doc, def string) any {
	d := ds.find(doc)
	if d == nil {
		return nil
	}
	if def == "" {
		root := d.Tree.(*Object)
		body := &Object{Vals: root.Vals}
		for _, k := range root.Keys {
			if !slices.Contains(rootKeywords, k) {
				body.Keys = append(body.Keys, k)
			}
		}
		return body
	}
	defs, _ := d.Tree.(*Object).Vals["$defs"].(*Object)
	if defs == nil {
		return nil
	}
	return defs.Vals[def]
}

// Surface is everything a schema directory declares, parsed and checked:
// what agents and registry files see of 3gs.
type Surface struct {
	// ContractVersion is the version of the tool contract, from
	// contract.json.
	ContractVersion string
	// Tools in name order.
	Tools []*Tool
	Docs  Documents
}

// Document returns the root schema of the document schema NAME.schema.json
// (registry, health, ...), or nil.
func (s *Surface) Document(name string) *Node {
	if d := s.Docs.find(name); d != nil {
		return d.Node
	}
	return nil
}

// DocumentNames lists the document schemas, sorted.
func (s *Surface) DocumentNames() []string {
	var names []string
	for _, d := range s.Docs {
		names = append(names, d.Name)
	}
	return names
}

// Load reads schemaDir: contract.json, *.schema.json and tools/*.json.
func Load(schemaDir string) (*Surface, error) {
	version, err := readContractVersion(schemaDir)
	if err != nil {
		return nil, err
	}
	docs, err := readDocuments(schemaDir)
	if err != nil {
		return nil, err
	}

	toolFiles, err := filepath.Glob(filepath.Join(schemaDir, toolsSchemaDir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(toolFiles)
	// Every tool file is checked and every problem reported, so one run
	// of go generate lists all there is to fix.
	var tools []*Tool
	var errs []error
	for _, path := range toolFiles {
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		name := filepath.ToSlash(filepath.Join("schema", toolsSchemaDir, filepath.Base(path)))
		t, err := parseTool(name, data, docs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if want := t.Name + ".json"; filepath.Base(path) != want {
			errs = append(errs, fmt.Errorf("%s: declares tool %q, so the file must be named %s", name, t.Name, want))
			continue
		}
		tools = append(tools, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(tools) == 0 {
		return nil, fmt.Errorf("no tool schemas in %s", filepath.Join(schemaDir, toolsSchemaDir))
	}
	return &Surface{ContractVersion: version, Tools: tools, Docs: docs}, nil
}

// ContractFile is the name of the file holding the contract version.
const ContractFile = "contract.json"

var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// readContractVersion reads contract.json, which holds the tool contract's
// version and nothing else (besides a $comment).
func readContractVersion(schemaDir string) (string, error) {
	path := filepath.Join(schemaDir, ContractFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("the contract version: %w (schema/%s holds {\"contractVersion\": \"MAJOR.MINOR.PATCH\"})", err, ContractFile)
	}
	var c struct {
		Comment string `json:"$comment"`
		Version string `json:"contractVersion"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return "", fmt.Errorf("schema/%s: %v", ContractFile, err)
	}
	if !semver.MatchString(c.Version) {
		return "", fmt.Errorf("schema/%s: contractVersion %q is not MAJOR.MINOR.PATCH", ContractFile, c.Version)
	}
	return c.Version, nil
}
