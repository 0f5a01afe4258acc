package schema

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Tool is one MCP tool as declared in schema/tools/NAME.json.
type Tool struct {
	File        string
	Name        string // MCP tool name, e.g. get_sources
	Method      string // Go name, e.g. GetSources
	Title       string
	Description string
	Tier        string // public, user or admin
	// Discoverable tools answer a caller below their tier who calls them
	// anyway with the tier needed and how to get a token, rather than as
	// an unknown tool. No tool is listed to callers below its tier.
	Discoverable bool
	// ListedWhen, when set, is the one condition under which tools/list
	// shows the tool (to callers of its tier and above); it may still be
	// called otherwise, as far as the server allows. One of
	// ListedWhenConditions' names: "peers" (the node follows curators its
	// registry endorses), "proposals" (the node takes proposals), "token"
	// (the caller presented a token of any tier).
	ListedWhen string
	// Annotations are the behaviour hints, by name (readOnlyHint, ...).
	Annotations map[string]bool
	Input       *Node
	Output      *Node
	// Manifest is the tool's entry in tools/list: name, title, description,
	// the input and output schemas (compacted, self-contained; the output
	// one lean, see leanOutput), and annotations. A "oneOf" at the root of
	// the input schema is left out (see unpublished).
	Manifest []byte
	// InputSchema and OutputSchema are the schemas as written, compacted
	// and self-contained, with nothing left out: what the decoders
	// enforce, and what the examples are checked against.
	InputSchema, OutputSchema []byte
	// Examples are the tool file's examples, each checked against the
	// schema it claims to fit.
	Examples Examples
	// tree is the tool file as parsed, kept so the type generator need not
	// read and parse the file again.
	Tree *Object
}

// ListedWhenCondition is one value a tool file's "listedWhen" may take.
type ListedWhenCondition struct {
	// Name is the value, as the tool file spells it.
	Name string
	// Says is what the contract (schema/CONTRACT.md) says of a tool
	// listed under it.
	Says string
}

// ListedWhenSays is what the contract says of a tool listed under the
// condition named name; "" for none (a tool always listed).
func ListedWhenSays(name string) string {
	for _, c := range ListedWhenConditions {
		if c.Name == name {
			return c.Says
		}
	}
	return ""
}

var (
	toolNameRE = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	Tiers      = []string{"public", "user", "admin"}
	toolKeys   = []string{"name", "title", "description", "tier", "annotations", "inputSchema", "outputSchema"}
	// optionalToolKeys may be left out of a tool file. Generate requires
	// "examples" (tests call every tool with them); Load does not, so that
	// 3gs schema diff can read revisions from before examples existed.
	optionalToolKeys = []string{"discoverable", "listedWhen", "examples"}
	// ListedWhenConditions are the conditions a tool file's "listedWhen"
	// may name, in the order of the constants generated for them
	// (gen.ListedWhen: ListedWhenPeers, ...), each with what the contract
	// says of a tool listed under it. A server decides each one
	// (mcp.Listed, whose test fails for a condition it does not).
	ListedWhenConditions = []ListedWhenCondition{
		{Name: "peers", Says: "listed when the node has peers"},
		{Name: "proposals", Says: "listed when the node takes proposals"},
		{Name: "token", Says: "listed to callers with a token"},
	}
	// ListedWhenValues are ListedWhenConditions' names.
	ListedWhenValues = func() []string {
		var names []string
		for _, c := range ListedWhenConditions {
			names = append(names, c.Name)
		}
		return names
	}()
	// Every hint is required so that no client falls back on the protocol's
	// defaults (destructive, open-world) for a tool that is neither.
	annotationKeys = []string{"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
)

// parseTool reads one tool file.
func parseTool(file string, data []byte, docs Documents) (*Tool, error) {
	tree, err := ParseTree(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	o, ok := tree.(*Object)
	if !ok {
		return nil, fmt.Errorf("%s: a tool file must hold a JSON object", file)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", file, fmt.Sprintf(format, args...))
	}
	for _, k := range o.Keys {
		if !slices.Contains(toolKeys, k) && !slices.Contains(optionalToolKeys, k) {
			return nil, fail("unknown key %q; a tool file has %s, and may have %s", k, strings.Join(toolKeys, ", "), strings.Join(optionalToolKeys, ", "))
		}
	}
	for _, k := range toolKeys {
		if _, ok := o.get(k); !ok {
			return nil, fail("missing key %q", k)
		}
	}
	t := &Tool{File: file, Tree: o}
	for key, dst := range map[string]*string{"name": &t.Name, "title": &t.Title, "description": &t.Description, "tier": &t.Tier} {
		s, ok := o.Vals[key].(string)
		if !ok || s == "" {
			return nil, fail("%q must be a non-empty string", key)
		}
		*dst = s
	}
	if !toolNameRE.MatchString(t.Name) || len(t.Name) > 64 {
		return nil, fail("tool name %q must be lower_snake_case, at most 64 characters", t.Name)
	}
	if !slices.Contains(Tiers, t.Tier) {
		return nil, fail("tier %q must be one of %s", t.Tier, strings.Join(Tiers, ", "))
	}
	if v, ok := o.Vals["discoverable"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return nil, fail("\"discoverable\" must be a boolean")
		}
		if b && t.Tier == "public" {
			return nil, fail("anyone may call a public tool already; \"discoverable\" applies to user and admin tools")
		}
		t.Discoverable = b
	}
	if v, ok := o.Vals["listedWhen"]; ok {
		s, isString := v.(string)
		if !isString || !slices.Contains(ListedWhenValues, s) {
			return nil, fail("\"listedWhen\" must be one of %s", strings.Join(ListedWhenValues, ", "))
		}
		t.ListedWhen = s
	}
	if !strings.Contains(t.Description, "Example") {
		return nil, fail("the description must show at least one call (\"Example: {...}\"); agents copy examples")
	}
	t.Method = GoName(t.Name)

	ann, ok := o.Vals["annotations"].(*Object)
	if !ok {
		return nil, fail("\"annotations\" must be an object")
	}
	if !slices.Equal(ann.Keys, annotationKeys) {
		return nil, fail("\"annotations\" must list exactly %s, in that order", strings.Join(annotationKeys, ", "))
	}
	t.Annotations = map[string]bool{}
	for _, k := range annotationKeys[1:] {
		b, ok := ann.Vals[k].(bool)
		if !ok {
			return nil, fail("annotations.%s must be a boolean", k)
		}
		t.Annotations[k] = b
	}

	if t.Input, err = parseSchema(file, "/inputSchema", o.Vals["inputSchema"], docs.defs); err != nil {
		return nil, err
	}
	if t.Input.Type != "object" || !t.Input.AdditionalFalse {
		return nil, fail("inputSchema must be an object with \"additionalProperties\": false")
	}
	if t.Output, err = parseSchema(file, "/outputSchema", o.Vals["outputSchema"], docs.defs); err != nil {
		return nil, err
	}
	if t.Output.Type != "object" || t.Output.IsMap() {
		return nil, fail("outputSchema must be an object with listed properties")
	}
	if t.Input.GoType != "" || t.Output.GoType != "" {
		return nil, fail("%q names a document schema's type; a tool's types are named after the tool (%sInput, %sOutput)", GoTypeKeyword, t.Method, t.Method)
	}
	if t.Manifest, err = manifestEntry(t, data, docs); err != nil {
		return nil, fail("%v", err)
	}
	if v, ok := o.Vals["examples"]; ok {
		if t.Examples, err = parseExamples(v); err != nil {
			return nil, fail("%v", err)
		}
	}
	return t, nil
}

// unpublished are the keywords tools/list leaves out of the root of an
// input schema, though the decoders enforce them. The Anthropic API
// refuses a tool whose input_schema has oneOf, anyOf or allOf at its root
// ("input_schema does not support oneOf, allOf, or anyOf at the top
// level"), and so do other model providers; hosts that pass tool schemas
// on to such an API drop the tool (Claude Code does, silently) or fail
// every request of the session. So a root oneOf is stated in the tool's
// description for the agent, and enforced by the server, which answers a
// call that breaks it with -32602 naming the choice.
var unpublished = []string{"oneOf"}

// manifestEntry builds the tool's tools/list entry, and fills
// t.InputSchema and t.OutputSchema. The input schema is copied from the
// file, only with insignificant whitespace removed, but for a root keyword
// in unpublished and its definitions' own notes (leanInput); the output
// schema is cut to what a client needs (leanOutput). A schema that refers into a document schema
// (registry.schema.json#/$defs/NAME) gets those definitions, and the ones
// they use, copied into its own "$defs", because clients cannot follow
// references to files they do not have.
func manifestEntry(t *Tool, data []byte, docs Documents) ([]byte, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	str := func(s string) {
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	b.WriteString(`{"name":`)
	str(t.Name)
	b.WriteString(`,"title":`)
	str(t.Title)
	b.WriteString(`,"description":`)
	str(t.Description)
	for _, k := range []string{"inputSchema", "outputSchema"} {
		full, published, err := selfContained(raw[k], docs, k == "inputSchema")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if k == "inputSchema" {
			t.InputSchema = full
			if published, err = leanInput(published); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
		} else {
			t.OutputSchema = full
			if published, err = leanOutput(full); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
		}
		b.WriteString(`,"` + k + `":`)
		b.Write(published)
	}
	b.WriteString(`,"annotations":`)
	if err := json.Compact(&b, raw["annotations"]); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// selfContained compacts a tool's schema and inlines the document
// definitions it refers to. published is the same schema without the root
// keywords in unpublished when leaveOut is set, else full itself.
func selfContained(raw json.RawMessage, docs Documents, leaveOut bool) (full, published []byte, err error) {
	var b bytes.Buffer
	if !externalRefIn.Match(raw) {
		if err := json.Compact(&b, raw); err != nil {
			return nil, nil, err
		}
		full = b.Bytes()
	} else {
		tree, err := ParseTree(raw)
		if err != nil {
			return nil, nil, err
		}
		if err := inlineDocumentDefs(tree.(*Object), docs); err != nil {
			return nil, nil, err
		}
		WriteJSON(&b, tree)
		full = b.Bytes()
	}
	if !leaveOut {
		return full, full, nil
	}
	tree, err := ParseTree(full)
	if err != nil {
		return nil, nil, err
	}
	root := tree.(*Object)
	kept := root.Keys[:0:0]
	for _, k := range root.Keys {
		if !slices.Contains(unpublished, k) {
			kept = append(kept, k)
		}
	}
	if len(kept) == len(root.Keys) {
		return full, full, nil
	}
	root.Keys = kept
	var pb bytes.Buffer
	WriteJSON(&pb, root)
	return full, pb.Bytes(), nil
}

// leanKeywords are what tools/list leaves out of an output schema, at
// any depth: the prose that explains fields to people, who read it in the
// tool file and schema/CONTRACT.md, the bounds the server keeps
// (lengths, counts, ranges, patterns), and the promise that an object has
// no other members ("additionalProperties": false), which a client
// reading a result has no use for: without it a client is only more
// lenient. What it needs stays: types, required, enums, formats and the
// shared "$defs". Every host puts the list
// into the model's context on every conversation (issue 48). Input
// schemas keep everything: they tell the model how to call the tool, and
// their bounds are what the server refuses.
var leanKeywords = []string{"title", "description", "examples", "$comment",
	"pattern", "minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum"}

// leanOutput is an output schema as tools/list carries it: without
// leanKeywords at any depth. Names of properties and definitions are kept
// whatever they are, so a property called "description" stays.
func leanOutput(full []byte) ([]byte, error) {
	tree, err := ParseTree(full)
	if err != nil {
		return nil, err
	}
	root, ok := tree.(*Object)
	if !ok {
		return nil, fmt.Errorf("an output schema must be an object")
	}
	stripLean(root)
	var b bytes.Buffer
	WriteJSON(&b, root)
	return b.Bytes(), nil
}

// leanInput is an input schema as tools/list carries it: whole, but for
// the "title" and "description" of each definition in its "$defs", notes
// on the shared definition for the people who maintain it (where it is
// used, why it is shared). The properties that use a definition keep
// their own descriptions, which are what tell the model how to call.
func leanInput(published []byte) ([]byte, error) {
	tree, err := ParseTree(published)
	if err != nil {
		return nil, err
	}
	root, ok := tree.(*Object)
	if !ok {
		return nil, fmt.Errorf("an input schema must be an object")
	}
	defs, _ := root.Vals["$defs"].(*Object)
	if defs == nil {
		return published, nil
	}
	for _, name := range defs.Keys {
		d, ok := defs.Vals[name].(*Object)
		if !ok {
			continue
		}
		kept := d.Keys[:0]
		for _, k := range d.Keys {
			if k == "title" || k == "description" {
				delete(d.Vals, k)
				continue
			}
			kept = append(kept, k)
		}
		d.Keys = kept
	}
	var b bytes.Buffer
	WriteJSON(&b, root)
	return b.Bytes(), nil
}

// subschemaMaps are the keywords whose value maps names to schemas;
// subschemaKeys those whose value is a schema, and subschemaLists those
// whose value is a list of schemas.
var (
	subschemaMaps  = []string{"properties", "$defs", "patternProperties", "dependentSchemas"}
	subschemaKeys  = []string{"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else", "unevaluatedProperties", "unevaluatedItems"}
	subschemaLists = []string{"oneOf", "anyOf", "allOf", "prefixItems"}
)

// eachSubschema calls f on every schema directly inside s.
func eachSubschema(s *Object, f func(*Object)) {
	for _, k := range s.Keys {
		v := s.Vals[k]
		switch {
		case slices.Contains(subschemaMaps, k):
			if m, ok := v.(*Object); ok {
				for _, name := range m.Keys {
					if sub, ok := m.Vals[name].(*Object); ok {
						f(sub)
					}
				}
			}
		case slices.Contains(subschemaKeys, k):
			if sub, ok := v.(*Object); ok {
				f(sub)
			}
		case slices.Contains(subschemaLists, k):
			if l, ok := v.([]any); ok {
				for _, e := range l {
					if sub, ok := e.(*Object); ok {
						f(sub)
					}
				}
			}
		}
	}
}

// stripLean removes leanKeywords from s and every schema inside it.
func stripLean(s *Object) {
	kept := s.Keys[:0]
	for _, k := range s.Keys {
		if slices.Contains(leanKeywords, k) || k == "additionalProperties" && s.Vals[k] == false {
			delete(s.Vals, k)
			continue
		}
		kept = append(kept, k)
	}
	s.Keys = kept
	eachSubschema(s, stripLean)
}

// GoName turns a snake_case name into an exported Go identifier.
func GoName(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]))
		b.WriteString(part[1:])
	}
	return b.String()
}

// externalRefIn finds a reference into a document schema in raw JSON.
var externalRefIn = regexp.MustCompile(`"\$ref"\s*:\s*"[a-z]+\.schema\.json[#"]`)

// inlineDocumentDefs rewrites every reference into a document schema as a
// local one and copies the definitions reached, with the document's own
// references among them, into schema's "$defs". A reference to a
// document's root becomes one to a definition named after the document
// (auditentry.schema.json → #/$defs/auditentry), a copy of the root
// without the keywords only a root may have.
func inlineDocumentDefs(schema *Object, docs Documents) error {
	defs, _ := schema.Vals["$defs"].(*Object)
	if defs == nil {
		defs = &Object{Vals: map[string]any{}}
		schema.Keys = append(schema.Keys, "$defs")
		schema.Vals["$defs"] = defs
	}
	local := map[string]bool{}
	for _, k := range defs.Keys {
		local[k] = true
	}
	type pending struct{ doc, def string }
	var queue []pending
	copied := map[string]string{} // def name → document it came from
	var rewrite func(v any, doc string)
	rewrite = func(v any, doc string) {
		switch t := v.(type) {
		case *Object:
			if ref, ok := t.Vals["$ref"].(string); ok {
				if m := ExternalRef.FindStringSubmatch(ref); m != nil {
					t.Vals["$ref"] = "#/$defs/" + cmp.Or(m[2], m[1])
					queue = append(queue, pending{m[1], m[2]})
				} else if name, ok := strings.CutPrefix(ref, "#/$defs/"); ok && doc != "" {
					queue = append(queue, pending{doc, name}) // local to the copied Document
				}
			}
			for _, k := range t.Keys {
				rewrite(t.Vals[k], doc)
			}
		case []any:
			for _, e := range t {
				rewrite(e, doc)
			}
		}
	}
	rewrite(schema, "")
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		name := cmp.Or(p.def, p.doc)
		if from, done := copied[name]; done {
			if from != p.doc {
				return fmt.Errorf("$defs/%s would come from both %s and %s.schema.json", name, from, p.doc)
			}
			continue
		}
		if local[name] {
			return fmt.Errorf("$defs/%s is defined here and also copied from %s.schema.json; rename the local one", name, p.doc)
		}
		tree := docs.defTree(p.doc, p.def)
		if tree == nil {
			return fmt.Errorf("%s.schema.json has no $defs/%s", p.doc, p.def)
		}
		copied[name] = p.doc
		defs.Keys = append(defs.Keys, name)
		defs.Vals[name] = tree
		rewrite(tree, p.doc)
	}
	return nil
}

// TierRank orders the tier names a tool file may give, lowest first
// (public, user, admin); -1 for any other name.
func TierRank(name string) int { return slices.Index(Tiers, name) }
