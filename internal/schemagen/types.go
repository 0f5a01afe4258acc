package schemagen

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/atombender/go-jsonschema/pkg/generator"
	"github.com/atombender/go-jsonschema/pkg/schemas"
	"github.com/three-good-sources/3gs/internal/schema"
)

// typeRoot is one schema whose Go types go-jsonschema writes.
type typeRoot struct {
	id       string // synthetic $id that maps the schema to its root type
	rootType string
	output   string // file name under gen/
	tree     any
	node     *schema.Node
}

// goTypes runs go-jsonschema in models-only mode (json tags, no
// unmarshalers, no validation: our decoders do both) and returns the
// formatted sources by file name.
//
// "format" is removed from the copy it sees, so that dates stay plain strings
// and gen/ does not import go-jsonschema's runtime types, except
// "date-time", which go-jsonschema makes a time.Time; and so is
// "oneOf", which on our schemas only says which properties go together and
// changes no type; the decoders enforce both. "x-go-type" is ours: the
// root type's name reaches go-jsonschema through the mapping instead.
func goTypes(pkg string, roots []typeRoot) (map[string][]byte, error) {
	var mappings []generator.SchemaMapping
	for _, r := range roots {
		mappings = append(mappings, generator.SchemaMapping{SchemaID: r.id, PackageName: pkg, RootType: r.rootType, OutputName: r.output})
	}
	var warnings []string
	parsed := docLoader{}
	g, err := generator.New(generator.Config{
		Loader:                    parsed,
		SchemaMappings:            mappings,
		DefaultPackageName:        pkg,
		Capitalizations:           []string{"URL", "SHA256", "SHA", "ID"},
		Tags:                      []string{"json"},
		OnlyModels:                true,
		DisableCustomTypesForMaps: true,
		Warner:                    func(s string) { warnings = append(warnings, s) },
	})
	if err != nil {
		return nil, err
	}
	for _, r := range roots {
		var b bytes.Buffer
		goTypesView(r.id).WriteJSON(&b, r.tree)
		s, err := schemas.FromJSONReader(&b)
		if err != nil {
			return nil, fmt.Errorf("go-jsonschema cannot read %s: %w", r.node.Where(), err)
		}
		if doc, ok := strings.CutPrefix(r.id, "urn:3gs:"); ok && !strings.Contains(doc, ":") {
			parsed[docURL(doc)] = s
		}
		if err := g.AddFile(r.id, s); err != nil {
			return nil, fmt.Errorf("go-jsonschema failed on %s: %w", r.node.Where(), err)
		}
	}
	if len(warnings) > 0 {
		return nil, fmt.Errorf("go-jsonschema warned: %s", strings.Join(warnings, "; "))
	}
	return g.Sources()
}

// docLoader hands go-jsonschema the document schemas it has already read
// when a tool schema refers into one (registry.schema.json#/$defs/NAME), so
// the tool reuses the document's Go type instead of declaring a copy.
type docLoader map[string]*schemas.Schema

func (l docLoader) Load(uri, _ string) (*schemas.Schema, error) {
	if s, ok := l[uri]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%s is not a document schema", uri)
}

// docURL is how a reference into document schema doc reaches go-jsonschema:
// an absolute URL it will not try to resolve as a file path.
func docURL(doc string) string { return "https://schema.3gs.invalid/" + doc + documentSuffix }

// typeless are the keywords go-jsonschema is not shown (see goTypes).
var typeless = []string{"format", "oneOf", schema.GoTypeKeyword}

// goTypesView is what go-jsonschema is shown of a schema whose root is
// id: the schema without the keywords in typeless (a "date-time" format
// kept, see timeFormat), and with references into document schemas made
// absolute (docURL).
func goTypesView(id string) *schema.Rewrite {
	return &schema.Rewrite{
		ID:   id,
		Drop: func(o *schema.Object, k string) bool { return slices.Contains(typeless, k) && !timeFormat(o, k) },
		Ref: func(ref string) string {
			m := schema.ExternalRef.FindStringSubmatch(ref)
			if m == nil {
				return ref
			}
			if m[2] != "" {
				return docURL(m[1]) + "#/$defs/" + m[2]
			}
			return docURL(m[1])
		},
	}
}

// timeFormat reports whether key k of schema o is a "format" that makes
// the field a time.Time: "date-time".
func timeFormat(o *schema.Object, k string) bool {
	return k == "format" && o.Vals[k] == "date-time"
}
