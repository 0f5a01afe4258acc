package schemagen

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/three-good-sources/3gs/internal/schema"
)

// field is one struct field go-jsonschema declares.
type field struct {
	GoName string
	Type   string // Go type expression, e.g. *string, []Source, map[string]Category
}

// structs maps type name to its fields by JSON name.
type structs map[string]map[string]field

// capitalizations are the words go-jsonschema is told to write in
// capitals wherever a name holds them (sha256 → SHA256, not Sha256).
var capitalizations = []string{"URL", "SHA256", "SHA", "ID"}

// declaredStructs is what go-jsonschema declares for roots, learned from
// the schema model by its naming rules rather than from its output: a
// root is named by its mapping (typeRoot.rootType), a $defs entry after
// its name, a nested object or enum after the type that holds it and the
// property (HealthFollow, HealthFollowStatus), an array's items after the
// array with Elem, a map's values with Value. A field is the property's
// name as an identifier; it is a pointer when the property is optional
// and not an array or a map. go-jsonschema refuses (a warning goTypes
// turns into an error) two schemas that would share a name, so a name
// stands for one schema; declaredStructs refuses it too.
func declaredStructs(surface *schema.Surface, roots []typeRoot) (structs, error) {
	d := &declarer{st: structs{}, owner: map[string]*schema.Node{}, docTypes: map[*schema.Node]string{}}
	// A $ref's target is named after the document, or the $defs entry,
	// it lives in: record every root's and every $defs entry's name first.
	for _, doc := range surface.Docs {
		d.docTypes[doc.Node] = doc.RootType
		for name, def := range doc.Node.Defs {
			d.docTypes[def] = identifier(name)
		}
	}
	for _, r := range roots {
		d.declare(r.rootType, r.node)
		for name, def := range r.node.Defs {
			d.docTypes[def] = identifier(name)
		}
	}
	for _, r := range roots {
		d.object(r.rootType, r.node)
		for name, def := range r.node.Defs {
			d.named(identifier(name), def)
		}
	}
	return d.st, d.err
}

type declarer struct {
	st       structs
	owner    map[string]*schema.Node // type name → the schema it stands for
	docTypes map[*schema.Node]string // a $ref target → its type's name
	err      error
}

func (d *declarer) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

// declare records that type name stands for n, and reports whether it is
// new (false: declared already, for n).
func (d *declarer) declare(name string, n *schema.Node) bool {
	if prev, ok := d.owner[name]; ok {
		if prev != n {
			d.fail("%s and %s would both be Go type %s; give one of them another name", prev.Where(), n.Where(), name)
		}
		return false
	}
	d.owner[name] = n
	return true
}

// named declares the type a named schema (a root or a $defs entry) is,
// when it is one of its own: an object with properties, or an enum.
func (d *declarer) named(name string, n *schema.Node) {
	if n.Type == "object" && !n.IsMap() || len(n.Enum) > 0 {
		d.typeOf(name, n, true)
	}
}

// object records the fields of struct type name, the object schema n.
func (d *declarer) object(name string, n *schema.Node) {
	if _, done := d.st[name]; done {
		return
	}
	fields := map[string]field{}
	d.st[name] = fields
	for _, p := range n.Properties {
		goName := identifier(p.Name)
		fields[p.Name] = field{GoName: goName, Type: d.typeOf(name+goName, p.Schema, n.IsRequired(p.Name))}
	}
}

// typeOf is the Go type of schema n in scope (the name a type declared
// for it would have), a pointer when not required and not a collection.
func (d *declarer) typeOf(scope string, n *schema.Node, required bool) string {
	opt := func(t string) string {
		if required {
			return t
		}
		return "*" + t
	}
	if n.Ref != nil {
		name, ok := d.docTypes[n.Ref]
		if !ok {
			d.fail("%s: the target of $ref has no type name", n.Where())
			return ""
		}
		if n.Ref.Type == "array" || n.Ref.IsMap() {
			return d.typeOf(name, n.Ref, required)
		}
		if len(n.Ref.Enum) == 0 && n.Ref.Type != "object" {
			return opt(scalar(n.Ref))
		}
		if d.declare(name, n.Ref) && n.Ref.Type == "object" {
			d.object(name, n.Ref)
		}
		return opt(name)
	}
	switch {
	case len(n.Enum) > 0:
		d.declare(scope, n)
		return opt(scope)
	case n.Type == "array":
		return "[]" + d.typeOf(scope+"Elem", n.Items, true)
	case n.IsMap():
		return "map[string]" + d.typeOf(scope+"Value", n.AdditionalSchema, true)
	case n.Type == "object":
		if d.declare(scope, n) {
			d.object(scope, n)
		}
		return opt(scope)
	}
	return opt(scalar(n))
}

// scalar is the Go type of a string, number, integer or boolean schema.
func scalar(n *schema.Node) string {
	switch n.Type {
	case "string":
		if n.Format == "date-time" {
			return timeType
		}
		return "string"
	case "integer":
		return "int"
	case "number":
		return "float64"
	}
	return "bool"
}

// identifier is a property's or definition's name as go-jsonschema makes
// it a Go name: split into words at underscores, hyphens and where a
// lower-case letter meets a capital, each word capitalized (or spelled as
// in capitalizations).
func identifier(name string) string {
	var b strings.Builder
	for _, w := range words(name) {
		cap := ""
		for _, c := range capitalizations {
			if strings.EqualFold(c, w) {
				cap = c
			}
		}
		if cap == "" {
			r := []rune(w)
			cap = string(unicode.ToUpper(r[0])) + string(r[1:])
		}
		b.WriteString(cap)
	}
	return b.String()
}

func words(name string) []string {
	var out []string
	start := 0
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-':
			if i > start {
				out = append(out, string(rs[start:i]))
			}
			start = i + 1
		case i > start && unicode.IsUpper(r) && unicode.IsLower(rs[i-1]):
			out = append(out, string(rs[start:i]))
			start = i
		}
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	return out
}
