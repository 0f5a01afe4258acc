package schemagen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/three-good-sources/3gs/internal/schema"
)

// encoderEmitter writes a document's encoder: EncodeX for the root and an
// unexported encodeT per struct type reached from it. Keys come out in the
// order the schema lists them, optional members only when set, map entries
// sorted, so a file 3gs writes back reads like the one its curator wrote.
type encoderEmitter struct {
	f       *jen.File
	structs structs
	emitted map[string]bool
	queue   []pendingStruct
	err     error
}

func newEncoderEmitter(pkg, header string, st structs) *encoderEmitter {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	f.ImportName(strictjsonPkg, "strictjson")
	return &encoderEmitter{f: f, structs: st, emitted: map[string]bool{}}
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
		jen.Var().Id("w").Qual(strictjsonPkg, "Writer"),
		jen.Id("encode"+typeName).Call(jen.Op("&").Id("w"), jen.Id("v")),
		jen.Return(jen.Id("w").Dot("Bytes").Call()),
	)
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
	body := []jen.Code{jen.Id("w").Dot("BeginObject").Call()}
	for _, prop := range n.Properties {
		f, ok := fields[prop.Name]
		if !ok {
			e.fail("%s: go-jsonschema declared no field for %q in %s", n.Where(), prop.Name, typeName)
			return
		}
		target := jen.Id("v").Dot(f.GoName)
		write := append([]jen.Code{jen.Id("w").Dot("Key").Call(jen.Lit(prop.Name))}, e.value(prop.Schema, f.Type, target, 0)...)
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
	e.f.Commentf("encode%s writes v (%s).", typeName, n.Where())
	e.f.Func().Id("encode"+typeName).Params(jen.Id("w").Op("*").Qual(strictjsonPkg, "Writer"), jen.Id("v").Op("*").Id(typeName)).Block(body...)
}

// value emits statements writing target, of Go type goType, described by n.
func (e *encoderEmitter) value(n *schema.Node, goType string, target *jen.Statement, depth int) []jen.Code {
	n = n.Resolved()
	if goType == timeType || goType == "*"+timeType {
		return timeValue(target)
	}
	if base, ok := strings.CutPrefix(goType, "*"); ok {
		return e.value(n, base, jen.Op("*").Add(target), depth)
	}
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
			return []jen.Code{jen.Id("encode"+goType).Call(jen.Id("w"), jen.Op("&").Add(target))}
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
