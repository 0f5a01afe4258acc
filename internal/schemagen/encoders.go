package schemagen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/three-good-sources/3gs/internal/schema"
)

// encoderEmitter writes encoders of generated types, in one of two styles.
//
// A document's (newEncoderEmitter): EncodeX for the root and an unexported
// encodeT per struct type reached from it. Keys come out in the order the
// schema lists them, optional members only when set, map entries sorted,
// indented, so a file 3gs writes back reads like the one its curator wrote.
//
// A tool output's (newOutputEncoderEmitter): an AppendJSON method on the
// root (tooltable.Output) and an unexported appendT per struct type, writing
// compact JSON through tooltable.Writer exactly as encoding/json's rules
// write the struct go-jsonschema declared: members in field order (by JSON
// name, as go-jsonschema sorts them), those it tags omitempty (the
// optional ones) left out when empty, nil pointers and lists as null, map
// entries sorted. Floats that are NaN or infinite are an error.
type encoderEmitter struct {
	f       *jen.File
	structs structs
	emitted map[string]bool
	queue   []pendingStruct
	err     error
	// outputs selects the tool output style.
	outputs bool
	// writer is the qualified type the generated functions write through.
	writer *jen.Statement
	// prefix begins the name of each struct's function: encode or append.
	prefix string
}

func newEncoderEmitter(pkg, header string, st structs) *encoderEmitter {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	f.ImportName(strictjsonPkg, "strictjson")
	return &encoderEmitter{f: f, structs: st, emitted: map[string]bool{}, writer: jen.Qual(strictjsonPkg, "Writer"), prefix: "encode"}
}

func newOutputEncoderEmitter(pkg, header string, st structs) *encoderEmitter {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	f.ImportName(tooltablePkg, "tooltable")
	f.ImportName(strictjsonPkg, "strictjson")
	return &encoderEmitter{f: f, structs: st, emitted: map[string]bool{}, outputs: true, writer: jen.Qual(tooltablePkg, "Writer"), prefix: "append"}
}

func (e *encoderEmitter) fail(format string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf(format, args...)
	}
}

func (e *encoderEmitter) root(typeName string, n *schema.Node, what string) {
	fn := "Encode" + typeName
	e.f.Comment(wrap(fmt.Sprintf("%s writes %s as JSON indented by two spaces, with a final newline: members in schema order, optional ones only when set, map entries sorted by key.", fn, what)))
	e.f.Func().Id(fn).Params(jen.Id("v").Op("*").Id(typeName)).Index().Byte().Block(
		jen.Var().Id("w").Add(e.writer),
		jen.Id(e.prefix+typeName).Call(jen.Op("&").Id("w"), jen.Id("v")),
		jen.Return(jen.Id("w").Dot("Bytes").Call()),
	)
	e.drain(typeName, n)
}

// outputRoot writes the AppendJSON method of a tool's output type.
func (e *encoderEmitter) outputRoot(typeName string, n *schema.Node, what string) {
	e.f.Comment(wrap(fmt.Sprintf("AppendJSON appends %s to dst as compact JSON, as encoding/json would write it (see tooltable.Output); nil is null.", what)))
	e.f.Func().Params(jen.Id("v").Op("*").Id(typeName)).Id("AppendJSON").Params(jen.Id("dst").Index().Byte()).Params(jen.Index().Byte(), jen.Error()).Block(
		jen.If(jen.Id("v").Op("==").Nil()).Block(jen.Return(jen.Append(jen.Id("dst"), jen.Lit("null").Op("...")), jen.Nil())),
		jen.Id("w").Op(":=").Add(e.writer).Values(jen.Dict{jen.Id("Buf"): jen.Id("dst")}),
		jen.Id(e.prefix+typeName).Call(jen.Op("&").Id("w"), jen.Id("v")),
		jen.Return(jen.Id("w").Dot("Finish").Call(jen.Len(jen.Id("dst")))),
	)
	e.drain(typeName, n)
}

// drain writes the function of typeName and of every struct type it reaches.
func (e *encoderEmitter) drain(typeName string, n *schema.Node) {
	e.enqueue(typeName, n)
	for len(e.queue) > 0 {
		next := e.queue[0]
		e.queue = e.queue[1:]
		e.structFunc(next.typeName, next.node)
	}
}

func (e *encoderEmitter) enqueue(typeName string, n *schema.Node) {
	if !e.emitted[typeName] {
		e.emitted[typeName] = true
		e.queue = append(e.queue, pendingStruct{typeName, n})
	}
}

func (e *encoderEmitter) structFunc(typeName string, n *schema.Node) {
	fields := e.structs[typeName]
	props := n.Properties
	if e.outputs { // go-jsonschema declares the fields by JSON name
		props = slices.SortedFunc(slices.Values(props), func(a, b *schema.Property) int { return strings.Compare(a.Name, b.Name) })
	}
	body := []jen.Code{jen.Id("w").Dot("BeginObject").Call()}
	for _, prop := range props {
		f, ok := fields[prop.Name]
		if !ok {
			e.fail("%s: go-jsonschema declared no field for %q in %s", n.Where(), prop.Name, typeName)
			return
		}
		target := jen.Id("v").Dot(f.GoName)
		key := jen.Id("w").Dot("Key").Call(jen.Lit(prop.Name))
		if e.outputs {
			if q := strconv.Quote(prop.Name); plainKey(prop.Name) {
				key = jen.Id("w").Dot("Field").Call(jen.Op("`" + q + ":`"))
			}
			body = append(body, e.outputMember(prop, f, key, !n.IsRequired(prop.Name))...)
			continue
		}
		write := append([]jen.Code{key}, e.value(prop.Schema, f.Type, target, 0)...)
		switch {
		case strings.HasPrefix(f.Type, "*"):
			body = append(body, jen.If(jen.Id("v").Dot(f.GoName).Op("!=").Nil()).Block(write...))
		case !n.IsRequired(prop.Name) && (strings.HasPrefix(f.Type, "[]") || strings.HasPrefix(f.Type, "map[")):
			body = append(body, jen.If(jen.Len(jen.Id("v").Dot(f.GoName)).Op(">").Lit(0)).Block(write...))
		default:
			body = append(body, write...)
		}
	}
	body = append(body, jen.Id("w").Dot("EndObject").Call())
	verb := "writes"
	if e.outputs {
		verb = "appends"
	}
	e.f.Commentf("%s%s %s v (%s).", e.prefix, typeName, verb, n.Where())
	e.f.Func().Id(e.prefix+typeName).Params(jen.Id("w").Op("*").Add(e.writer), jen.Id("v").Op("*").Id(typeName)).Block(body...)
}

// plainKey reports whether a member name is written in JSON as it is,
// between quotes: then the output encoders write it, quoted, as a
// constant.
func plainKey(name string) bool {
	for _, c := range name {
		if c < 0x20 || c == '"' || c == '\\' || c == '`' || c >= 0x7f {
			return false
		}
	}
	return true
}

// outputMember emits a tool output's member prop, in field f: left out
// when empty if omitempty (optional: go-jsonschema tags those omitempty),
// as encoding/json decides emptiness.
func (e *encoderEmitter) outputMember(prop *schema.Property, f field, key *jen.Statement, omitEmpty bool) []jen.Code {
	// v is the field: a new statement each time, as jennifer's grow in place.
	v := func() *jen.Statement { return jen.Id("v").Dot(f.GoName) }
	if !omitEmpty {
		return append([]jen.Code{key}, e.value(prop.Schema, f.Type, v(), 0)...)
	}
	var set *jen.Statement
	switch n := prop.Schema.Resolved(); {
	case f.Type == timeType:
		// omitzero, as encoding/json reads go-jsonschema's tag: a zero time
		// is left out.
		set = jen.Op("!").Add(v()).Dot("IsZero").Call()
	case f.Type == "*"+timeType:
		// omitzero calls IsZero through the pointer: nil or a zero time is
		// left out.
		return []jen.Code{jen.If(v().Op("!=").Nil().Op("&&").Op("!").Add(v()).Dot("IsZero").Call()).Block(append([]jen.Code{key}, timeValue(v())...)...)}
	case strings.HasPrefix(f.Type, "*"):
		// Set: not nil, so the value pointed to is written without that check.
		var write []jen.Code
		if base := strings.TrimPrefix(f.Type, "*"); n.Type == "object" && !n.IsMap() {
			e.enqueue(base, n)
			write = []jen.Code{key, jen.Id(e.prefix+base).Call(jen.Id("w"), v())}
		} else {
			write = append([]jen.Code{key}, e.value(prop.Schema, base, jen.Op("*").Add(v()), 0)...)
		}
		return []jen.Code{jen.If(v().Op("!=").Nil()).Block(write...)}
	case strings.HasPrefix(f.Type, "[]") || strings.HasPrefix(f.Type, "map["):
		// Set: not nil either, so container writes it without that check.
		write := append([]jen.Code{key}, e.container(n, f.Type, v(), 0)...)
		return []jen.Code{jen.If(jen.Len(v()).Op(">").Lit(0)).Block(write...)}
	case n.Type == "string":
		set = v().Op("!=").Lit("")
	case n.Type == "integer" || n.Type == "number":
		set = v().Op("!=").Lit(0)
	case n.Type == "boolean":
		set = v()
	default: // a struct is never empty to encoding/json
		return append([]jen.Code{key}, e.value(prop.Schema, f.Type, v(), 0)...)
	}
	return []jen.Code{jen.If(set).Block(append([]jen.Code{key}, e.value(prop.Schema, f.Type, v(), 0)...)...)}
}

// value emits statements writing target, of Go type goType, described by n.
func (e *encoderEmitter) value(n *schema.Node, goType string, target *jen.Statement, depth int) []jen.Code {
	n = n.Resolved()
	if goType == timeType {
		return timeValue(target)
	}
	if goType == "*"+timeType {
		if e.outputs {
			return []jen.Code{jen.If(jen.Add(target).Op("==").Nil()).Block(jen.Id("w").Dot("Null").Call()).Else().Block(timeValue(target)...)}
		}
		return timeValue(target)
	}
	if base, ok := strings.CutPrefix(goType, "*"); ok {
		var deref []jen.Code
		if n.Type == "object" && !n.IsMap() { // the struct's function takes the pointer itself
			e.enqueue(base, n)
			deref = []jen.Code{jen.Id(e.prefix+base).Call(jen.Id("w"), target)}
		} else {
			deref = e.value(n, base, jen.Op("*").Add(target), depth)
		}
		if e.outputs {
			return []jen.Code{jen.If(jen.Add(target).Op("==").Nil()).Block(jen.Id("w").Dot("Null").Call()).Else().Block(deref...)}
		}
		return deref
	}
	if e.outputs && (strings.HasPrefix(goType, "[]") || strings.HasPrefix(goType, "map[")) {
		if written := e.container(n, goType, target, depth); written != nil {
			return []jen.Code{jen.If(jen.Add(target).Op("==").Nil()).Block(jen.Id("w").Dot("Null").Call()).Else().Block(written...)}
		}
		return nil
	}
	return e.container(n, goType, target, depth)
}

// container emits statements writing target, of Go type goType, described
// by n, which is resolved: a scalar, a list, a map or a struct.
func (e *encoderEmitter) container(n *schema.Node, goType string, target *jen.Statement, depth int) []jen.Code {
	scalar := func(method, builtin string) []jen.Code {
		v := jen.Add(target)
		if goType != builtin {
			v = jen.Id(builtin).Call(target)
		}
		return []jen.Code{jen.Id("w").Dot(method).Call(v)}
	}
	switch n.Type {
	case "string":
		return scalar("String", "string")
	case "boolean":
		return scalar("Bool", "bool")
	case "integer":
		return scalar("Int", "int")
	case "number":
		return scalar("Float", "float64")
	case "array":
		elem := strings.TrimPrefix(goType, "[]")
		i := fmt.Sprintf("i%d", depth)
		loop := append([]jen.Code{jen.Id("w").Dot("Item").Call()}, e.value(n.Items, elem, jen.Add(target).Index(jen.Id(i)), depth+1)...)
		return []jen.Code{
			jen.Id("w").Dot("BeginArray").Call(),
			jen.For(jen.Id(i).Op(":=").Range().Add(target)).Block(loop...),
			jen.Id("w").Dot("EndArray").Call(),
		}
	case "object":
		if !n.IsMap() {
			e.enqueue(goType, n)
			return []jen.Code{jen.Id(e.prefix+goType).Call(jen.Id("w"), jen.Op("&").Add(target))}
		}
		elem := strings.TrimPrefix(goType, "map[string]")
		k, v := fmt.Sprintf("k%d", depth), fmt.Sprintf("v%d", depth)
		loop := []jen.Code{
			jen.Id("w").Dot("Key").Call(jen.Id(k)),
			jen.Id(v).Op(":=").Add(target).Index(jen.Id(k)), // map values are not addressable
		}
		loop = append(loop, e.value(n.AdditionalSchema, elem, jen.Id(v), depth+1)...)
		return []jen.Code{
			jen.Id("w").Dot("BeginObject").Call(),
			jen.For(jen.List(jen.Id("_"), jen.Id(k)).Op(":=").Range().Qual(strictjsonPkg, "SortedKeys").Call(target)).Block(loop...),
			jen.Id("w").Dot("EndObject").Call(),
		}
	}
	e.fail("%s: type %s is not supported", n.Where(), n.Type)
	return nil
}

// timeValue writes a time.Time (or a *time.Time, whose methods are the
// same) as the decoders read it: RFC 3339 in UTC, with the fraction of a
// second when there is one, as the logs have always stamped their
// entries. A time read from such a file is written back byte for byte.
func timeValue(target *jen.Statement) []jen.Code {
	return []jen.Code{jen.Id("w").Dot("String").Call(jen.Add(target).Dot("UTC").Call().Dot("Format").Call(jen.Qual("time", "RFC3339Nano")))}
}

func (e *encoderEmitter) finish() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	return render(e.f)
}
