package schema

import (
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
