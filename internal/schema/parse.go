package schema

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
)

// keywords lists, per JSON type, the keywords the generator enforces or that
// carry no validation (annotations). Anything else is refused.
var (
	annotationKeywords = []string{"$schema", "$id", "$defs", "$comment", "title", "description", "examples", GoTypeKeyword}
	// rootKeywords may appear only at the root of a schema.
	rootKeywords = []string{"$schema", "$id", "$defs", GoTypeKeyword}
	typeKeywords = map[string][]string{
		"object":  {"type", "properties", "required", "additionalProperties", "propertyNames", "minProperties", "oneOf"},
		"array":   {"type", "items", "minItems", "maxItems"},
		"string":  {"type", "minLength", "maxLength", "pattern", "format", "enum"},
		"integer": {"type", "minimum", "maximum"},
		"number":  {"type", "minimum", "maximum"},
		"boolean": {"type"},
	}
	formats = []string{"date", "date-time", "uri"}
)

// knownKeyword reports whether the generator implements keyword k for some type.
func knownKeyword(k string) bool { return slices.Contains(allKeywords(), k) }

// allKeywords lists every implemented keyword once, sorted.
func allKeywords() []string {
	all := slices.Clone(annotationKeywords)
	for _, ks := range typeKeywords {
		all = append(all, ks...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// draft202012 is the only dialect accepted in "$schema".
const draft202012 = "https://json-schema.org/draft/2020-12/schema"

// schemaParser turns one document's tree into Nodes and resolves refs.
type schemaParser struct {
	file     string
	defs     map[string]*Node
	refs     []*Node // nodes whose Ref awaits resolution, by RefName
	external externalDefs
}

// externalDefs finds a $defs entry of a document schema by the document's
// name (registry for registry.schema.json); nil when there is none.
type externalDefs func(doc, def string) *Node

// ExternalRef is the form of a $ref into another document schema: to one
// of its $defs (registry.schema.json#/$defs/NAME; the second group names
// it) or to its root (auditentry.schema.json, the second group empty).
var ExternalRef = regexp.MustCompile(`^([a-z]+)\.schema\.json(?:#/\$defs/([A-Za-z0-9_]+)|#?)$`)

// GoTypeKeyword names the Go type of a document schema's root, in place
// of the one derived from its file name: {"x-go-type": "AuditEntry"} in
// auditentry.schema.json. Clients never see it: tools/list copies of the
// document leave it out.
const GoTypeKeyword = "x-go-type"

// goTypeName is the form of an x-go-type: an exported Go identifier.
var goTypeName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// parseSchema builds the Node for a root schema (a whole file, or a tool's
// inputSchema/outputSchema). Its "$defs" are the targets of "#/$defs/NAME".
func parseSchema(file, ptr string, v any, external externalDefs) (*Node, error) {
	p := &schemaParser{file: file, defs: map[string]*Node{}, external: external}
	o, ok := v.(*Object)
	if !ok {
		return nil, fmt.Errorf("%s#%s: a schema must be an object", file, ptr)
	}
	if dv, ok := o.get("$defs"); ok {
		defs, ok := dv.(*Object)
		if !ok {
			return nil, fmt.Errorf("%s#%s/$defs: must be an object", file, ptr)
		}
		for _, name := range defs.Keys {
			n, err := p.node(ptr+"/$defs/"+name, defs.Vals[name], false)
			if err != nil {
				return nil, err
			}
			p.defs[name] = n
		}
	}
	root, err := p.node(ptr, v, true)
	if err != nil {
		return nil, err
	}
	root.Defs = p.defs
	for _, r := range p.refs {
		if r.RefDoc != "" {
			var target *Node
			if p.external != nil {
				target = p.external(r.RefDoc, r.RefName)
			}
			if target == nil && r.RefName == "" {
				return nil, fmt.Errorf("%s: $ref names %s.schema.json, which is not a document schema", r.Where(), r.RefDoc)
			}
			if target == nil {
				return nil, fmt.Errorf("%s: $ref names %s.schema.json#/$defs/%s, which does not exist", r.Where(), r.RefDoc, r.RefName)
			}
			r.Ref = target
			continue
		}
		target, ok := p.defs[r.RefName]
		if !ok {
			return nil, fmt.Errorf("%s: $ref names #/$defs/%s, which does not exist", r.Where(), r.RefName)
		}
		if target.Ref != nil {
			return nil, fmt.Errorf("%s: $ref to a $ref is not supported", r.Where())
		}
		r.Ref = target
	}
	return root, nil
}

func (p *schemaParser) node(ptr string, v any, root bool) (*Node, error) {
	n := &Node{File: p.file, Ptr: ptr}
	o, ok := v.(*Object)
	if !ok {
		return nil, n.errorf("a schema must be an object (boolean schemas are not supported)")
	}
	if _, ok := o.get("$ref"); ok {
		return p.ref(n, o)
	}
	if err := typeAndKeywords(n, o, root); err != nil {
		return nil, err
	}
	r := &keywordReader{n: n, o: o}
	n.Title = r.str("title")
	n.Description = r.str("description")
	if n.GoType = r.str(GoTypeKeyword); r.err == nil && n.GoType != "" && !goTypeName.MatchString(n.GoType) {
		r.err = n.errorf("%q must be an exported Go identifier, such as AuditEntry", GoTypeKeyword)
	}
	if r.err != nil {
		return nil, r.err
	}
	var err error
	switch n.Type {
	case "object":
		if n.MinProperties = r.count("minProperties"); r.err == nil {
			err = p.object(n, o)
		}
	case "array":
		err = p.array(n, r)
	case "string":
		err = stringKeywords(n, r)
	case "integer", "number":
		if n.Minimum, n.Maximum = r.number("minimum"), r.number("maximum"); r.err == nil && n.Minimum != nil && n.Maximum != nil && *n.Minimum > *n.Maximum {
			r.err = n.errorf("minimum is greater than maximum")
		}
	}
	if err = cmp.Or(err, r.err); err != nil {
		return nil, err
	}
	return n, nil
}

// errorf is an error about schema n, naming where it is.
func (n *Node) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", n.Where(), fmt.Sprintf(format, args...))
}

// ref reads a "$ref" schema, to be resolved once the whole schema is read.
func (p *schemaParser) ref(n *Node, o *Object) (*Node, error) {
	s, _ := o.Vals["$ref"].(string)
	name, found := strings.CutPrefix(s, "#/$defs/")
	if m := ExternalRef.FindStringSubmatch(s); m != nil && p.external != nil {
		n.RefDoc, name, found = m[1], m[2], true
	}
	if !found || name == "" && n.RefDoc == "" || strings.Contains(name, "/") {
		return nil, n.errorf("$ref must point into this schema's $defs (#/$defs/NAME) or to a document schema (auditentry.schema.json) or into its $defs (registry.schema.json#/$defs/NAME); got %q", s)
	}
	for _, k := range o.Keys {
		if k != "$ref" && k != "description" && k != "$comment" {
			return nil, n.errorf("keyword %q beside $ref is not supported; put it in the referenced schema", k)
		}
	}
	n.RefName = name
	n.Description, _ = o.Vals["description"].(string)
	p.refs = append(p.refs, n)
	return n, nil
}

// typeAndKeywords sets n's type, and refuses any keyword the generator
// does not enforce, or that does not apply to the type or the place.
func typeAndKeywords(n *Node, o *Object, root bool) error {
	for _, k := range o.Keys {
		if !knownKeyword(k) {
			return n.errorf("keyword %q is not supported by the generator, which would not enforce it; supported: %s, $ref", k, strings.Join(allKeywords(), ", "))
		}
		if !root && slices.Contains(rootKeywords, k) {
			return n.errorf("%q is only allowed at the root of a schema", k)
		}
	}
	t, _ := o.Vals["type"].(string)
	allowed, ok := typeKeywords[t]
	if !ok {
		return n.errorf("every schema needs \"type\" with one of object, array, string, integer, number, boolean (a single type; type lists are not supported)")
	}
	n.Type = t
	for _, k := range o.Keys {
		if !slices.Contains(allowed, k) && !slices.Contains(annotationKeywords, k) {
			return n.errorf("keyword %q does not apply to type %s", k, t)
		}
	}
	if s, ok := o.Vals["$schema"]; ok && s != draft202012 {
		return n.errorf("$schema must be %q (JSON Schema 2020-12)", draft202012)
	}
	return nil
}

// keywordReader reads the values of a schema's keywords, keeping the
// first error: once one is set, every read returns the zero value.
type keywordReader struct {
	n   *Node
	o   *Object
	err error
}

// value is the keyword's value, absent after an error.
func (r *keywordReader) value(key string) (any, bool) {
	if r.err != nil {
		return nil, false
	}
	v, ok := r.o.Vals[key]
	return v, ok
}

func (r *keywordReader) str(key string) string {
	v, ok := r.value(key)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		r.err = r.n.errorf("%q must be a string", key)
	}
	return s
}

func (r *keywordReader) count(key string) *int {
	v, ok := r.value(key)
	if !ok {
		return nil
	}
	num, ok := v.(json.Number)
	i, perr := num.Int64()
	if !ok || perr != nil || i < 0 || i > math.MaxInt32 {
		r.err = r.n.errorf("%q must be a non-negative integer", key)
		return nil
	}
	c := int(i)
	return &c
}

func (r *keywordReader) number(key string) *float64 {
	v, ok := r.value(key)
	if !ok {
		return nil
	}
	num, ok := v.(json.Number)
	f, perr := num.Float64()
	if !ok || perr != nil {
		r.err = r.n.errorf("%q must be a number", key)
		return nil
	}
	return &f
}

// array fills the array keywords; "items" is required.
func (p *schemaParser) array(n *Node, r *keywordReader) error {
	if n.MinItems, n.MaxItems = r.count("minItems"), r.count("maxItems"); r.err != nil {
		return r.err
	}
	iv, ok := r.o.get("items")
	if !ok {
		return n.errorf("arrays need \"items\"")
	}
	var err error
	if n.Items, err = p.node(n.Ptr+"/items", iv, false); err != nil {
		return err
	}
	if n.MinItems != nil && n.MaxItems != nil && *n.MinItems > *n.MaxItems {
		return n.errorf("minItems is greater than maxItems")
	}
	return nil
}

// stringKeywords fills the string keywords: lengths, a pattern that
// compiles, a supported format, an enum of distinct strings.
func stringKeywords(n *Node, r *keywordReader) error {
	n.MinLength, n.MaxLength = r.count("minLength"), r.count("maxLength")
	if n.Pattern, n.Format = r.str("pattern"), r.str("format"); r.err != nil {
		return r.err
	}
	if n.Pattern != "" {
		if _, err := regexp.Compile(n.Pattern); err != nil {
			return n.errorf("pattern does not compile: %v", err)
		}
	}
	if n.Format != "" && !slices.Contains(formats, n.Format) {
		return n.errorf("format %q is not supported; supported: %s", n.Format, strings.Join(formats, ", "))
	}
	ev, ok := r.o.get("enum")
	if !ok {
		return nil
	}
	list, _ := ev.([]any)
	for _, e := range list {
		s, ok := e.(string)
		if !ok || slices.Contains(n.Enum, s) {
			return n.errorf("enum must be a list of distinct strings")
		}
		n.Enum = append(n.Enum, s)
	}
	if len(n.Enum) == 0 {
		return n.errorf("enum must not be empty")
	}
	return nil
}
