package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
)

// Node is one JSON Schema, reduced to the keywords the generator implements.
// Anything else in a schema file is refused, so an edit can never add a
// keyword that the generated decoders would silently ignore.
type Node struct {
	File string // schema file, for messages
	Ptr  string // JSON pointer of this schema inside File

	Type        string // object, array, string, integer, number or boolean
	Title       string
	Description string

	// object
	Properties       []*Property
	Required         []string
	AdditionalFalse  bool  // additionalProperties: false
	AdditionalSchema *Node // additionalProperties: {schema}: a map
	PropertyNames    *Node
	MinProperties    *int
	// OneOf is "oneOf" on an object with listed properties, in the one
	// form the generator enforces: branches that each require a set of
	// properties ({"required": [...]}), of which exactly one must be
	// present in full. JSON Schema counts the branches an object passes;
	// with branches like these that is the sets it holds all of.
	OneOf []RequiredSet

	// array
	Items              *Node
	MinItems, MaxItems *int

	// string
	MinLength, MaxLength *int
	Pattern              string
	Format               string
	Enum                 []string

	// number and integer
	Minimum, Maximum *float64

	// Ref is the target of a "$ref" schema; all other fields are then empty.
	// RefDoc is set when the target is in another document schema: one of
	// its $defs (registry.schema.json#/$defs/NAME), or, with RefName
	// empty, its root (auditentry.schema.json). The generated code then
	// uses that document's Go type and decoder.
	Ref     *Node
	RefName string
	RefDoc  string

	// GoType is the Go name a document schema gives its root type
	// ("x-go-type"); empty when the name comes from the file name.
	GoType string

	// Defs are a root schema's "$defs" by name.
	Defs map[string]*Node
}

// RequiredSet is one branch of an object's "oneOf": the properties it
// requires, in schema order, and what it is for (its "description", which
// error messages repeat to say how to choose).
type RequiredSet struct {
	Required    []string
	Description string
}

// Names says which properties the branch requires, for people: "query",
// "both start and end", "all of x, y and z".
func (r RequiredSet) Names() string { return r.Quoted("") }

// Quoted is Names with every property name between two marks ("`" for
// Markdown).
func (r RequiredSet) Quoted(mark string) string {
	var q []string
	for _, name := range r.Required {
		q = append(q, mark+name+mark)
	}
	switch len(q) {
	case 1:
		return q[0]
	case 2:
		return "both " + joinWords(q, "and")
	}
	return "all of " + joinWords(q, "and")
}

// OneOfText says what an object's oneOf asks for: "exactly one of query or
// slug". It is empty when n has no oneOf.
func (n *Node) OneOfText() string {
	if len(n.OneOf) == 0 {
		return ""
	}
	var names []string
	for _, r := range n.OneOf {
		names = append(names, r.Names())
	}
	return "exactly one of " + joinWords(names, "or")
}

// OneOfHelp is the branches' descriptions, joined with "; ": what each
// choice is for. Empty when no branch has one.
func (n *Node) OneOfHelp() string {
	var help []string
	for _, r := range n.OneOf {
		if r.Description != "" {
			help = append(help, r.Description)
		}
	}
	return strings.Join(help, "; ")
}

// InOneOf reports whether some branch of n's oneOf requires property name.
func (n *Node) InOneOf(name string) bool {
	return slices.ContainsFunc(n.OneOf, func(r RequiredSet) bool { return slices.Contains(r.Required, name) })
}

// joinWords joins words as a sentence lists them: "a", "a or b", "a, b or c".
func joinWords(words []string, conj string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}

// Property is a named member of an object schema.
type Property struct {
	Name   string
	Schema *Node
}

// Resolved follows a $ref to the schema it names.
func (n *Node) Resolved() *Node {
	if n.Ref != nil {
		return n.Ref
	}
	return n
}

// Describe is n's description, or when it has none, that of the schema it
// refers to: a property written {"description": ..., "$ref": ...} keeps its
// own.
func (n *Node) Describe() string {
	if n.Description != "" {
		return n.Description
	}
	return n.Resolved().Description
}

// TypeText names n's type for people: "string", "array of object",
// "object keyed by name".
func (n *Node) TypeText() string {
	n = n.Resolved()
	switch {
	case n.Type == "array" && n.Items != nil:
		return "array of " + n.Items.TypeText()
	case n.IsMap():
		return "object keyed by name"
	}
	return n.Type
}

// IsRequired reports whether the object schema n requires property name.
func (n *Node) IsRequired(name string) bool { return slices.Contains(n.Required, name) }

// IsMap reports whether n is an object keyed by arbitrary names.
func (n *Node) IsMap() bool { return n.Type == "object" && n.AdditionalSchema != nil }

func (n *Node) Where() string { return n.File + "#" + n.Ptr }

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
		return nil, fmt.Errorf("%s: a schema must be an object (boolean schemas are not supported)", n.Where())
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", n.Where(), fmt.Sprintf(format, args...))
	}

	if ref, ok := o.get("$ref"); ok {
		s, _ := ref.(string)
		name, found := strings.CutPrefix(s, "#/$defs/")
		if m := ExternalRef.FindStringSubmatch(s); m != nil && p.external != nil {
			n.RefDoc, name, found = m[1], m[2], true
		}
		if !found || name == "" && n.RefDoc == "" || strings.Contains(name, "/") {
			return nil, fail("$ref must point into this schema's $defs (#/$defs/NAME) or, from a tool, to a document schema (auditentry.schema.json) or into its $defs (registry.schema.json#/$defs/NAME); got %q", s)
		}
		for _, k := range o.Keys {
			if k != "$ref" && k != "description" && k != "$comment" {
				return nil, fail("keyword %q beside $ref is not supported; put it in the referenced schema", k)
			}
		}
		n.RefName = name
		n.Description, _ = o.Vals["description"].(string)
		p.refs = append(p.refs, n)
		return n, nil
	}

	for _, k := range o.Keys {
		if !knownKeyword(k) {
			return nil, fail("keyword %q is not supported by the generator, which would not enforce it; supported: %s, $ref", k, strings.Join(allKeywords(), ", "))
		}
		if !root && slices.Contains(rootKeywords, k) {
			return nil, fail("%q is only allowed at the root of a schema", k)
		}
	}
	t, _ := o.Vals["type"].(string)
	allowed, ok := typeKeywords[t]
	if !ok {
		return nil, fail("every schema needs \"type\" with one of object, array, string, integer, number, boolean (a single type; type lists are not supported)")
	}
	n.Type = t
	for _, k := range o.Keys {
		if !slices.Contains(allowed, k) && !slices.Contains(annotationKeywords, k) {
			return nil, fail("keyword %q does not apply to type %s", k, t)
		}
	}
	if s, ok := o.Vals["$schema"]; ok && s != draft202012 {
		return nil, fail("$schema must be %q (JSON Schema 2020-12)", draft202012)
	}
	var err error
	str := func(key string) string {
		if err != nil {
			return ""
		}
		v, ok := o.Vals[key]
		if !ok {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			err = fail("%q must be a string", key)
		}
		return s
	}
	count := func(key string) *int {
		if err != nil {
			return nil
		}
		v, ok := o.Vals[key]
		if !ok {
			return nil
		}
		num, ok := v.(json.Number)
		i, perr := num.Int64()
		if !ok || perr != nil || i < 0 || i > math.MaxInt32 {
			err = fail("%q must be a non-negative integer", key)
			return nil
		}
		c := int(i)
		return &c
	}
	number := func(key string) *float64 {
		if err != nil {
			return nil
		}
		v, ok := o.Vals[key]
		if !ok {
			return nil
		}
		num, ok := v.(json.Number)
		f, perr := num.Float64()
		if !ok || perr != nil {
			err = fail("%q must be a number", key)
			return nil
		}
		return &f
	}
	n.Title = str("title")
	n.Description = str("description")
	if n.GoType = str(GoTypeKeyword); err == nil && n.GoType != "" && !goTypeName.MatchString(n.GoType) {
		err = fail("%q must be an exported Go identifier, such as AuditEntry", GoTypeKeyword)
	}
	switch t {
	case "object":
		n.MinProperties = count("minProperties")
		if err == nil {
			err = p.object(n, o)
		}
	case "array":
		n.MinItems, n.MaxItems = count("minItems"), count("maxItems")
		if err == nil {
			iv, ok := o.get("items")
			if !ok {
				return nil, fail("arrays need \"items\"")
			}
			n.Items, err = p.node(ptr+"/items", iv, false)
		}
		if err == nil && n.MinItems != nil && n.MaxItems != nil && *n.MinItems > *n.MaxItems {
			err = fail("minItems is greater than maxItems")
		}
	case "string":
		n.MinLength, n.MaxLength = count("minLength"), count("maxLength")
		n.Pattern, n.Format = str("pattern"), str("format")
		if err == nil && n.Pattern != "" {
			if _, rerr := regexp.Compile(n.Pattern); rerr != nil {
				err = fail("pattern does not compile: %v", rerr)
			}
		}
		if err == nil && n.Format != "" && !slices.Contains(formats, n.Format) {
			err = fail("format %q is not supported; supported: %s", n.Format, strings.Join(formats, ", "))
		}
		if ev, ok := o.get("enum"); ok && err == nil {
			list, _ := ev.([]any)
			for _, e := range list {
				s, ok := e.(string)
				if !ok || slices.Contains(n.Enum, s) {
					return nil, fail("enum must be a list of distinct strings")
				}
				n.Enum = append(n.Enum, s)
			}
			if len(n.Enum) == 0 {
				err = fail("enum must not be empty")
			}
		}
	case "integer", "number":
		n.Minimum, n.Maximum = number("minimum"), number("maximum")
		if err == nil && n.Minimum != nil && n.Maximum != nil && *n.Minimum > *n.Maximum {
			err = fail("minimum is greater than maximum")
		}
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// object fills the object keywords. Every object must say what it does with
// unlisted Keys: "additionalProperties": false for records, or a schema for
// maps keyed by name.
func (p *schemaParser) object(n *Node, o *Object) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", n.Where(), fmt.Sprintf(format, args...))
	}
	if pv, ok := o.get("properties"); ok {
		props, ok := pv.(*Object)
		if !ok {
			return fail("\"properties\" must be an object")
		}
		for _, name := range props.Keys {
			child, err := p.node(n.Ptr+"/properties/"+name, props.Vals[name], false)
			if err != nil {
				return err
			}
			n.Properties = append(n.Properties, &Property{Name: name, Schema: child})
		}
	}
	if len(n.Properties) > 64 {
		return fail("more than 64 properties; decoders track fields in a 64-bit set")
	}
	if rv, ok := o.get("required"); ok {
		list, _ := rv.([]any)
		for _, r := range list {
			s, ok := r.(string)
			if !ok || slices.Contains(n.Required, s) {
				return fail("\"required\" must be a list of distinct strings")
			}
			if !slices.ContainsFunc(n.Properties, func(p *Property) bool { return p.Name == s }) {
				return fail("required property %q is not declared in \"properties\"", s)
			}
			n.Required = append(n.Required, s)
		}
	}
	switch av := o.Vals["additionalProperties"].(type) {
	case bool:
		if av {
			return fail("\"additionalProperties\": true is not allowed; list the properties or give a schema for map values")
		}
		n.AdditionalFalse = true
	case *Object:
		if len(n.Properties) > 0 {
			return fail("an object with both \"properties\" and an \"additionalProperties\" schema is not supported")
		}
		child, err := p.node(n.Ptr+"/additionalProperties", av, false)
		if err != nil {
			return err
		}
		if child.Type == "object" {
			return fail("map values that are objects must be a $ref to #/$defs/NAME: go-jsonschema gives inline map values no Go type name")
		}
		n.AdditionalSchema = child
	default:
		return fail("objects must set \"additionalProperties\" to false (or to a schema, for maps)")
	}
	if pn, ok := o.get("propertyNames"); ok {
		if n.AdditionalSchema == nil {
			return fail("\"propertyNames\" is only supported on maps (objects with an \"additionalProperties\" schema)")
		}
		pno, ok := pn.(*Object)
		if !ok {
			return fail("\"propertyNames\" must be an object")
		}
		// Property names are always strings, so "type" may be left out.
		if _, ok := pno.get("type"); !ok {
			pno = &Object{Keys: append([]string{"type"}, pno.Keys...), Vals: withKey(pno.Vals, "type", "string")}
		}
		child, err := p.node(n.Ptr+"/propertyNames", pno, false)
		if err != nil {
			return err
		}
		if child.Type != "string" || child.Format != "" || len(child.Enum) > 0 || child.MinLength != nil {
			return fail("\"propertyNames\" supports only \"pattern\" and \"maxLength\"")
		}
		n.PropertyNames = child
	}
	if n.MinProperties != nil && n.AdditionalSchema == nil {
		return fail("\"minProperties\" is only supported on maps")
	}
	if ov, ok := o.get("oneOf"); ok {
		return p.oneOf(n, ov)
	}
	return nil
}

// oneOfKeys are the keywords a oneOf branch may hold: the set it requires,
// and annotations.
var oneOfKeys = []string{"required", "description", "$comment"}

// oneOf reads an object's "oneOf" of required sets. Any other oneOf (of
// types, of whole schemas) is refused: the decoders enforce this form only.
// A branch must be able to be the only one that holds, so none may require
// a property the object requires anyway, or all of another branch's.
func (p *schemaParser) oneOf(n *Node, v any) error {
	where := n.Where() + "/oneOf"
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
	}
	if len(n.Properties) == 0 {
		return fail("\"oneOf\" is only supported on objects with listed properties")
	}
	const form = `"oneOf" must list two or more branches of the form {"required": ["NAME", ...], "description": "what it is for"}: exactly one branch's properties must all be present`
	list, ok := v.([]any)
	if !ok || len(list) < 2 {
		return fail("%s", form)
	}
	for i, bv := range list {
		b, ok := bv.(*Object)
		if !ok {
			return fail("%s", form)
		}
		for _, k := range b.Keys {
			if !slices.Contains(oneOfKeys, k) {
				return fail("branch %d: keyword %q is not supported in a oneOf branch; %s", i, k, form)
			}
		}
		var set RequiredSet
		if d, ok := b.Vals["description"]; ok {
			if set.Description, ok = d.(string); !ok {
				return fail("branch %d: \"description\" must be a string", i)
			}
		}
		names, _ := b.Vals["required"].([]any)
		if len(names) == 0 {
			return fail("branch %d: %s", i, form)
		}
		for _, nv := range names {
			name, ok := nv.(string)
			if !ok || slices.Contains(set.Required, name) {
				return fail("branch %d: \"required\" must be a list of distinct strings", i)
			}
			if !slices.ContainsFunc(n.Properties, func(p *Property) bool { return p.Name == name }) {
				return fail("branch %d: required property %q is not declared in \"properties\"", i, name)
			}
			if n.IsRequired(name) {
				return fail("branch %d: %q is required by the object itself, so the branch always holds", i, name)
			}
			set.Required = append(set.Required, name)
		}
		for j, prev := range n.OneOf {
			if subset(prev.Required, set.Required) || subset(set.Required, prev.Required) {
				return fail("branches %d and %d: one requires all the other does, so the other can never be the only one to hold", j, i)
			}
		}
		n.OneOf = append(n.OneOf, set)
	}
	return nil
}

// subset reports whether every element of a is in b.
func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// withKey returns a copy of m with key set to v.
func withKey(m map[string]any, key string, v any) map[string]any {
	c := maps.Clone(m)
	c[key] = v
	return c
}
