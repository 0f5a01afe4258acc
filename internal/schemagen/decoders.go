package schemagen

import (
	"fmt"
	"go/types"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/three-good-sources/3gs/internal/schema"
)

// strictjsonPkg is the runtime the generated decoders call.
const strictjsonPkg = "github.com/three-good-sources/3gs/internal/strictjson"

// decoderEmitter writes one file of strict decoders: an exported DecodeX for
// each root schema and an unexported decodeT per struct type reached from it.
type decoderEmitter struct {
	f *jen.File
	// typesPkg is the import path of the package that declares the types
	// decoded, when it is not the package the file is in (gentest decodes
	// gen's types); empty when it is.
	typesPkg string
	structs  structs
	emitted  map[string]*schema.Node
	queue    []pendingStruct
	patterns map[string]string // pattern source → variable name
	enums    map[string]string // variable name → joined values
	decls    []jen.Code        // package-level vars, emitted last
	err      error
}

type pendingStruct struct {
	typeName string
	node     *schema.Node
}

// pathRef names the *strictjson.Path of the value being decoded: either the
// function's parameter p (a pointer) or a local Path value.
type pathRef struct {
	name  string
	isPtr bool
}

func (r pathRef) arg() jen.Code {
	if r.isPtr {
		return jen.Id(r.name)
	}
	return jen.Op("&").Id(r.name)
}

func newDecoderEmitter(pkg, header string, st structs) *decoderEmitter {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	f.ImportName(strictjsonPkg, "strictjson")
	return &decoderEmitter{f: f, structs: st, emitted: map[string]*schema.Node{}, patterns: map[string]string{}, enums: map[string]string{}}
}

// typ is the type expression goType (as go-jsonschema spells it: *T, []T,
// map[string]T, a builtin or a declared name), with declared names taken
// from typesPkg when the types live in another package.
func (e *decoderEmitter) typ(goType string) *jen.Statement {
	if e.typesPkg == "" || goType == timeType {
		return goTypeCode(goType)
	}
	switch {
	case strings.HasPrefix(goType, "*"):
		return jen.Op("*").Add(e.typ(goType[1:]))
	case strings.HasPrefix(goType, "[]"):
		return jen.Index().Add(e.typ(goType[2:]))
	case strings.HasPrefix(goType, "map[string]"):
		return jen.Map(jen.String()).Add(e.typ(strings.TrimPrefix(goType, "map[string]")))
	case types.Universe.Lookup(goType) != nil:
		return jen.Id(goType)
	}
	return jen.Qual(e.typesPkg, goType)
}

// goTypeCode is goType as code in the package that declares the types:
// a name, or time.Time, the one type from elsewhere.
func goTypeCode(goType string) *jen.Statement {
	if goType == timeType {
		return jen.Qual("time", "Time")
	}
	return jen.Id(goType)
}

func (e *decoderEmitter) fail(format string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf(format, args...)
	}
}

// root emits the exported entry point for one root schema.
func (e *decoderEmitter) root(typeName string, n *schema.Node, what string) {
	fn := "Decode" + typeName
	e.f.Comment(wrap(fmt.Sprintf("%s strictly decodes %s (see strictjson.Decode).", fn, what)))
	e.f.Func().Id(fn).Params(jen.Id("data").Index().Byte()).Params(jen.Op("*").Add(e.typ(typeName)), jen.Error()).Block(
		jen.Return(jen.Qual(strictjsonPkg, "Decode").Call(jen.Id("data"), jen.Id("decode"+typeName))),
	)
	e.enqueue(typeName, n)
	for len(e.queue) > 0 {
		next := e.queue[0]
		e.queue = e.queue[1:]
		e.structFunc(next.typeName, next.node)
	}
}

// inPlace emits DecodeTInPlace for a document's root type T.
func (e *decoderEmitter) inPlace(typeName string) {
	fn := "Decode" + typeName + "InPlace"
	e.f.Comment(wrap(fmt.Sprintf("%s is Decode%s for bytes the caller keeps, unchanged, for as long as the value is used: its strings point into data instead of into a copy (see strictjson.DecodeInPlace).", fn, typeName)))
	e.f.Func().Id(fn).Params(jen.Id("data").Index().Byte()).Params(jen.Op("*").Add(e.typ(typeName)), jen.Error()).Block(
		jen.Return(jen.Qual(strictjsonPkg, "DecodeInPlace").Call(jen.Id("data"), jen.Id("decode"+typeName))),
	)
}

// outputTable emits DecodeOutput, which finds a tool's result decoder by
// the tool's name, so tests hold every tool's results to its schema
// without naming one.
func outputTable(e *decoderEmitter, tools []*schema.Tool) {
	var cases []jen.Code
	for _, t := range tools {
		cases = append(cases, jen.Case(jen.Lit(t.Name)).Block(
			jen.List(jen.Id("v"), jen.Err()).Op(":=").Id("Decode"+t.Method+"Output").Call(jen.Id("data")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("v"), jen.Nil()),
		))
	}
	e.f.Comment("DecodeOutput strictly decodes a structured result of the tool named name, into")
	e.f.Comment("its generated output type; a name that is no tool's is an error.")
	e.f.Func().Id("DecodeOutput").Params(jen.Id("name").String(), jen.Id("data").Index().Byte()).Params(jen.Any(), jen.Error()).Block(
		jen.Switch(jen.Id("name")).Block(cases...),
		jen.Return(jen.Nil(), jen.Qual("errors", "New").Call(jen.Lit("no tool is named ").Op("+").Qual("strconv", "Quote").Call(jen.Id("name")))),
	)
}

func (e *decoderEmitter) enqueue(typeName string, n *schema.Node) {
	if prev, ok := e.emitted[typeName]; ok {
		if prev != n {
			e.fail("%s and %s both map to Go type %s", prev.Where(), n.Where(), typeName)
		}
		return
	}
	e.emitted[typeName] = n
	e.queue = append(e.queue, pendingStruct{typeName, n})
}

// structFunc emits decodeT for an object schema with listed properties.
func (e *decoderEmitter) structFunc(typeName string, n *schema.Node) {
	fields, ok := e.structs[typeName]
	if !ok && len(n.Properties) > 0 {
		e.fail("%s: go-jsonschema declared no type %s", n.Where(), typeName)
		return
	}
	namesVar := lowerFirst(typeName) + "Fields"
	var names []jen.Code
	var required uint64
	var cases []jen.Code
	for i, prop := range n.Properties {
		f, ok := fields[prop.Name]
		if !ok {
			e.fail("%s: go-jsonschema declared no field for %q in %s", n.Where(), prop.Name, typeName)
			return
		}
		names = append(names, jen.Lit(prop.Name))
		if n.IsRequired(prop.Name) {
			required |= 1 << i
		}
		body := []jen.Code{
			jen.If(jen.Op("!").Id("d").Dot("Claim").Call(jen.Id("p"), jen.Id("key"), jen.Op("&").Id("seen"), jen.Lit(i))).Block(jen.Continue()),
			jen.Id("fp").Op(":=").Id("p").Dot("Key").Call(jen.Id("key")),
		}
		body = append(body, e.value(prop.Schema, pathRef{name: "fp"}, f.Type, jen.Id("out").Dot(f.GoName), typeName+f.GoName, 0, !n.IsRequired(prop.Name))...)
		cases = append(cases, jen.Case(jen.Lit(prop.Name)).Block(body...))
	}
	known := jen.Id(namesVar)
	if len(n.Properties) == 0 {
		known = jen.Nil()
	}
	cases = append(cases, jen.Default().Block(jen.Id("d").Dot("UnknownKey").Call(jen.Id("p"), jen.Id("key"), known)))

	body := []jen.Code{jen.If(jen.Op("!").Id("d").Dot("Object").Call(jen.Id("p"))).Block(jen.Return())}
	if len(n.Properties) > 0 {
		body = append(body, jen.Var().Id("seen").Uint64())
	}
	body = append(body, jen.For().Block(
		jen.List(jen.Id("key"), jen.Id("more")).Op(":=").Id("d").Dot("NextKey").Call(),
		jen.If(jen.Op("!").Id("more")).Block(jen.Break()),
		jen.Switch(jen.Id("key")).Block(cases...),
	))
	if required != 0 {
		body = append(body, jen.Id("d").Dot("Missing").Call(jen.Id("p"), jen.Id("seen"), jen.Op(fmt.Sprintf("0b%b", required)), known))
	}
	if len(n.OneOf) > 0 {
		ruleVar := lowerFirst(typeName) + "OneOf"
		body = append(body, jen.Id("d").Dot("OneOf").Call(jen.Id("p"), jen.Id("seen"), jen.Op("&").Id(ruleVar)))
		e.decls = append(e.decls,
			jen.Commentf("%s is %s's oneOf: bit i of a set stands for %s[i].", ruleVar, typeName, namesVar),
			jen.Var().Id(ruleVar).Op("=").Qual(strictjsonPkg, "OneOf").Values(oneOfFields(n)))
	}
	e.f.Commentf("decode%s reads the object at p (%s) into out.", typeName, n.Where())
	e.f.Func().Id("decode"+typeName).Params(
		jen.Id("d").Op("*").Qual(strictjsonPkg, "Decoder"),
		jen.Id("p").Op("*").Qual(strictjsonPkg, "Path"),
		jen.Id("out").Op("*").Add(e.typ(typeName)),
	).Block(body...)
	if len(n.Properties) > 0 {
		e.decls = append(e.decls,
			jen.Commentf("%s lists %s's fields in schema order; bit i of a decoder's seen set stands for %s[i].", namesVar, typeName, namesVar),
			jen.Var().Id(namesVar).Op("=").Index().String().Values(names...))
	}
}

// oneOfFields are the fields of the strictjson.OneOf that enforces n's oneOf.
func oneOfFields(n *schema.Node) jen.Dict {
	var sets, names []jen.Code
	for _, r := range n.OneOf {
		var mask uint64
		for i, p := range n.Properties {
			if slices.Contains(r.Required, p.Name) {
				mask |= 1 << i
			}
		}
		sets = append(sets, jen.Op(fmt.Sprintf("0b%b", mask)))
		names = append(names, jen.Lit(r.Names()))
	}
	d := jen.Dict{
		jen.Id("Sets"):  jen.Index().Uint64().Values(sets...),
		jen.Id("Want"):  jen.Lit(n.OneOfText()),
		jen.Id("Names"): jen.Index().String().Values(names...),
	}
	if help := n.OneOfHelp(); help != "" {
		d[jen.Id("Help")] = jen.Lit(help)
	}
	return d
}

// value emits statements that decode the value at path into target, whose
// Go type is goType, enforcing n's constraints. depth keeps the names of
// nested loop variables apart. For an optional property, an empty array or
// map is left unset: the json tag omits empty collections, so storing one
// would not survive an encode/decode round trip.
func (e *decoderEmitter) value(n *schema.Node, path pathRef, goType string, target *jen.Statement, hint string, depth int, optional bool) []jen.Code {
	n = n.Resolved()
	if base, ok := strings.CutPrefix(goType, "*"); ok {
		v := fmt.Sprintf("opt%d", depth)
		inner := []jen.Code{jen.Var().Id(v).Add(e.typ(base))}
		inner = append(inner, e.value(n, path, base, jen.Id(v), hint, depth+1, false)...)
		inner = append(inner, jen.Add(target).Op("=").Op("&").Id(v))
		return []jen.Code{jen.Block(inner...)}
	}
	convert := func(v jen.Code, builtin string) jen.Code {
		if goType == builtin {
			return v
		}
		return e.typ(goType).Call(v)
	}
	read := func(method, builtin string, checks []jen.Code) []jen.Code {
		body := append(checks, jen.Add(target).Op("=").Add(convert(jen.Id("v"), builtin)))
		return []jen.Code{jen.If(jen.List(jen.Id("v"), jen.Id("ok")).Op(":=").Id("d").Dot(method).Call(path.arg()), jen.Id("ok")).Block(body...)}
	}
	if goType == timeType {
		return e.timeValue(n, path, target, hint)
	}
	switch n.Type {
	case "string":
		return read("String", "string", e.stringChecks(n, path, hint))
	case "boolean":
		return read("Bool", "bool", nil)
	case "integer", "number":
		method, builtin, asFloat := "Float", "float64", jen.Id("v")
		if n.Type == "integer" {
			method, builtin, asFloat = "Int", "int", jen.Float64().Call(jen.Id("v"))
		}
		var checks []jen.Code
		if n.Minimum != nil {
			checks = append(checks, jen.Id("d").Dot("Minimum").Call(path.arg(), asFloat, jen.Lit(*n.Minimum)))
		}
		if n.Maximum != nil {
			checks = append(checks, jen.Id("d").Dot("Maximum").Call(path.arg(), asFloat, jen.Lit(*n.Maximum)))
		}
		return read(method, builtin, checks)
	case "array":
		return e.arrayValue(n, path, goType, target, hint, depth, optional)
	case "object":
		return e.objectValue(n, path, goType, target, hint, depth, optional)
	}
	e.fail("%s: type %s is not supported", n.Where(), n.Type)
	return nil
}

// timeType is how go-jsonschema declares a "date-time" string's field.
const timeType = "time.Time"

// timeValue is value for a "date-time" string held as a time.Time: the
// string's checks (the format among them) and then its time, parsed and
// in UTC, as the encoders write it, so a value decoded, encoded and
// decoded again is the value first decoded.
func (e *decoderEmitter) timeValue(n *schema.Node, path pathRef, target *jen.Statement, hint string) []jen.Code {
	if n.Type != "string" || n.Format != "date-time" {
		e.fail("%s: go-jsonschema declared a time.Time for a schema that is no date-time string", n.Where())
		return nil
	}
	body := append(e.stringChecks(n, path, hint),
		jen.If(jen.List(jen.Id("t"), jen.Err()).Op(":=").Qual("time", "Parse").Call(jen.Qual("time", "RFC3339Nano"), jen.Id("v")), jen.Err().Op("==").Nil()).Block(
			jen.Add(target).Op("=").Id("t").Dot("UTC").Call()))
	return []jen.Code{jen.If(jen.List(jen.Id("v"), jen.Id("ok")).Op(":=").Id("d").Dot("String").Call(path.arg()), jen.Id("ok")).Block(body...)}
}

// arrayValue is value for an array: each item decoded in turn, the count
// checked against minItems and maxItems.
func (e *decoderEmitter) arrayValue(n *schema.Node, path pathRef, goType string, target *jen.Statement, hint string, depth int, optional bool) []jen.Code {
	elem, ok := strings.CutPrefix(goType, "[]")
	if !ok {
		e.fail("%s: expected a slice type for an array, go-jsonschema declared %s", n.Where(), goType)
		return nil
	}
	items, item, ip, i := fmt.Sprintf("items%d", depth), fmt.Sprintf("item%d", depth), fmt.Sprintf("ip%d", depth), fmt.Sprintf("i%d", depth)
	loop := []jen.Code{
		jen.Id(ip).Op(":=").Id(path.name).Dot("Index").Call(jen.Id(i)),
		jen.Var().Id(item).Add(e.typ(elem)),
	}
	loop = append(loop, e.value(n.Items, pathRef{name: ip}, elem, jen.Id(item), hint+"Item", depth+1, false)...)
	loop = append(loop, jen.Id(items).Op("=").Append(jen.Id(items), jen.Id(item)))
	min, max := -1, -1
	if n.MinItems != nil {
		min = *n.MinItems
	}
	if n.MaxItems != nil {
		max = *n.MaxItems
	}
	// With a bound on the items, the slice is made to hold them (at most
	// the bound), rather than grown: for a registry's sources and
	// patterns the growing was 70 MB of garbage at 100,000 categories.
	start := jen.Id(items).Op(":=").Index().Add(e.typ(elem)).Values()
	if max >= 0 {
		start = jen.Id(items).Op(":=").Make(jen.Index().Add(e.typ(elem)), jen.Lit(0), jen.Id("d").Dot("Items").Call(jen.Lit(max)))
	}
	body := []jen.Code{
		start,
		jen.For(jen.Id(i).Op(":=").Lit(0), jen.Id("d").Dot("NextItem").Call(), jen.Id(i).Op("++")).Block(loop...),
	}
	if min >= 0 || max >= 0 {
		body = append(body, jen.Id("d").Dot("Count").Call(path.arg(), jen.Len(jen.Id(items)), jen.Lit(min), jen.Lit(max)))
	}
	body = append(body, assignCollection(target, items, optional))
	return []jen.Code{jen.If(jen.Id("d").Dot("Array").Call(path.arg())).Block(body...)}
}

// objectValue is value for an object: a record's decoder function (emitted
// once per type), or a map read member by member.
func (e *decoderEmitter) objectValue(n *schema.Node, path pathRef, goType string, target *jen.Statement, hint string, depth int, optional bool) []jen.Code {
	if !n.IsMap() {
		if len(n.Properties) == 0 {
			e.fail("%s: nested objects need properties (or an additionalProperties schema)", n.Where())
			return nil
		}
		e.enqueue(goType, n)
		return []jen.Code{jen.Id("decode"+goType).Call(jen.Id("d"), path.arg(), jen.Op("&").Add(target))}
	}
	elem, ok := strings.CutPrefix(goType, "map[string]")
	if !ok {
		e.fail("%s: expected a map type, go-jsonschema declared %s", n.Where(), goType)
		return nil
	}
	// strictjson.Map reads the members (on every core for a large
	// object); the function reads one member's key and value.
	m, key, kp, v := fmt.Sprintf("m%d", depth), fmt.Sprintf("key%d", depth), fmt.Sprintf("kp%d", depth), fmt.Sprintf("v%d", depth)
	var member []jen.Code
	if pn := n.PropertyNames; pn != nil {
		if pn.Pattern != "" {
			member = append(member, jen.Id("d").Dot("KeyPattern").Call(jen.Id(kp), jen.Id(key), jen.Id(e.pattern(pn.Pattern, hint+"Key")).Call()))
		}
		if pn.MaxLength != nil {
			member = append(member, jen.Id("d").Dot("KeyMaxLength").Call(jen.Id(kp), jen.Id(key), jen.Lit(*pn.MaxLength)))
		}
	}
	member = append(member, e.value(n.AdditionalSchema, pathRef{name: kp, isPtr: true}, elem, jen.Parens(jen.Op("*").Id(v)), hint+"Value", depth+1, false)...)
	body := []jen.Code{
		jen.Id(m).Op(":=").Qual(strictjsonPkg, "Map").Call(jen.Id("d"), path.arg(),
			jen.Func().Params(
				jen.Id("d").Op("*").Qual(strictjsonPkg, "Decoder"),
				jen.Id(key).String(),
				jen.Id(kp).Op("*").Qual(strictjsonPkg, "Path"),
				jen.Id(v).Op("*").Add(e.typ(elem)),
			).Block(member...)),
	}
	if n.MinProperties != nil {
		body = append(body, jen.Id("d").Dot("MinProperties").Call(path.arg(), jen.Len(jen.Id(m)), jen.Lit(*n.MinProperties)))
	}
	body = append(body, assignCollection(target, m, optional))
	return []jen.Code{jen.If(jen.Id("d").Dot("Object").Call(path.arg())).Block(body...)}
}

// assignCollection stores a decoded array or map, skipping an empty one for
// an optional property.
func assignCollection(target *jen.Statement, v string, optional bool) jen.Code {
	assign := jen.Add(target).Op("=").Id(v)
	if optional {
		return jen.If(jen.Len(jen.Id(v)).Op(">").Lit(0)).Block(assign)
	}
	return assign
}

// stringChecks emits the constraint checks for a decoded string v.
func (e *decoderEmitter) stringChecks(n *schema.Node, path pathRef, hint string) []jen.Code {
	var c []jen.Code
	call := func(method string, args ...jen.Code) {
		c = append(c, jen.Id("d").Dot(method).Call(append([]jen.Code{path.arg(), jen.Id("v")}, args...)...))
	}
	if n.MinLength != nil {
		call("MinLength", jen.Lit(*n.MinLength))
	}
	if n.MaxLength != nil {
		call("MaxLength", jen.Lit(*n.MaxLength))
	}
	switch n.Format {
	case "date":
		call("FormatDate")
	case "date-time":
		call("FormatDateTime")
	case "uri":
		call("FormatURI")
	}
	if n.Pattern != "" {
		call("Pattern", jen.Id(e.pattern(n.Pattern, hint)).Call())
	}
	if len(n.Enum) > 0 {
		name := "enum" + hint
		joined := strings.Join(n.Enum, "\x00")
		if prev, dup := e.enums[name]; !dup {
			e.enums[name] = joined
			var vals []jen.Code
			for _, v := range n.Enum {
				vals = append(vals, jen.Lit(v))
			}
			e.decls = append(e.decls, jen.Commentf("%s holds the values allowed at %s.", name, n.Where()), jen.Var().Id(name).Op("=").Index().String().Values(vals...))
			// Code that needs the list (a command-line flag checked before
			// any document is read) takes a copy from here instead of
			// repeating it, so a value added to the schema reaches it.
			e.decls = append(e.decls, jen.Commentf("Enum%s returns the values allowed at %s, in schema order.", hint, n.Where()),
				jen.Func().Id("Enum"+hint).Params().Index().String().Block(jen.Return(jen.Qual("slices", "Clone").Call(jen.Id(name)))))
		} else if prev != joined {
			e.fail("%s: two different enums would be named %s", n.Where(), name)
		}
		call("Enum", jen.Id(name))
	}
	return c
}

// pattern returns the function that gives the compiled pattern, declaring
// it on first use. A pattern is compiled once, when a document is first
// checked against it, not at package initialization: a process reads
// only a few of the schemas (a server its registry, signature and tool
// arguments), and compiling all of them at start kept about 290 KB of
// regexps live on its heap, which the collector paces itself by.
func (e *decoderEmitter) pattern(src, hint string) string {
	if name, ok := e.patterns[src]; ok {
		return name
	}
	name := "pattern" + hint
	e.patterns[src] = name
	e.decls = append(e.decls, jen.Var().Id(name).Op("=").Qual("sync", "OnceValue").Call(
		jen.Func().Params().Op("*").Qual("regexp", "Regexp").Block(jen.Return(jen.Qual("regexp", "MustCompile").Call(jen.Lit(src))))))
	return name
}

// finish appends the package-level declarations and renders the file.
func (e *decoderEmitter) finish() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	for _, d := range e.decls {
		e.f.Add(d)
	}
	return render(e.f)
}

// wrap breaks text into comment lines of at most 80 characters.
func wrap(text string) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		if n > 0 && n+1+len(w) > 80 {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }
