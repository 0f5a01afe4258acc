package schemagen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

const sonicPkg = "github.com/bytedance/sonic"

// handlersFile declares ToolHandlers, one method per tool, so a tool added
// to schema/tools/ does not compile until internal/ implements it. Tools
// whose input takes no parameters get their empty struct here, because
// go-jsonschema emits nothing for an object without properties.
func handlersFile(pkg, header string, tools []*Tool) ([]byte, error) {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	f.Comment("ToolHandlers is the tool logic behind the MCP tools declared in schema/tools/.")
	f.Comment("For each tool, one method gets the strictly decoded arguments and returns the")
	f.Comment("structured result, and one renders that result as the plain text block that")
	f.Comment("accompanies it. A *ToolError from the first becomes a result with isError: true;")
	f.Comment("any other error is an internal error.")
	var methods []jen.Code
	for _, t := range tools {
		methods = append(methods,
			jen.Commentf("%s serves %s: %s.", t.Method, t.Name, t.Title),
			jen.Id(t.Method).Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("in").Op("*").Id(t.Method+"Input")).Params(jen.Op("*").Id(t.Method+"Output"), jen.Error()),
			jen.Commentf("%sText renders a %s result as plain text.", t.Method, t.Name),
			jen.Id(t.Method+"Text").Params(jen.Id("out").Op("*").Id(t.Method+"Output")).String(),
		)
	}
	f.Type().Id("ToolHandlers").Interface(methods...)

	var consts []jen.Code
	for _, t := range tools {
		consts = append(consts, jen.Id("Tool"+t.Method).Op("=").Lit(t.Name))
	}
	f.Comment("Tool names as clients send them in tools/call.")
	f.Const().Defs(consts...)

	for _, t := range tools {
		if len(t.Input.Properties) == 0 {
			f.Commentf("%sInput is the input of %s, which takes no parameters.", t.Method, t.Name)
			f.Type().Id(t.Method + "Input").Struct()
		}
	}
	return render(f)
}

// dispatchFile writes the dispatch table: for each tool its name, tier and a
// call function that decodes the arguments strictly, runs the handler and
// encodes the result with sonic.
func dispatchFile(pkg, header string, tools []*Tool) ([]byte, error) {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	f.ImportName(sonicPkg, "sonic")

	f.Comment("ToolError is a failure the tool reports to the model rather than to the client:")
	f.Comment("it becomes a result with isError: true, the text block Text and structured")
	f.Comment("content Structured, which must match the tool's output schema.")
	f.Type().Id("ToolError").Struct(jen.Id("Text").String(), jen.Id("Structured").Any())
	f.Func().Params(jen.Id("e").Op("*").Id("ToolError")).Id("Error").Params().String().Block(jen.Return(jen.Id("e").Dot("Text")))

	f.Comment("Result is a successful tool call: the text block and the structured content as JSON.")
	f.Type().Id("Result").Struct(jen.Id("Text").String(), jen.Id("Structured").Index().Byte())

	f.Comment("Tool is one entry of the dispatch table.")
	f.Type().Id("Tool").Struct(
		jen.Comment("Name is the MCP tool name."),
		jen.Id("Name").String(),
		jen.Comment("Tier is the lowest caller tier that may run the tool: public, user or admin."),
		jen.Id("Tier").String(),
		jen.Comment("Manifest is the tool's tools/list entry, schemas embedded verbatim."),
		jen.Id("Manifest").String(),
		jen.Id("call").Func().Params(jen.Qual("context", "Context"), jen.Id("ToolHandlers"), jen.Index().Byte()).Params(jen.Op("*").Id("Result"), jen.Error()),
	)
	f.Comment("Call decodes args (a JSON object; empty means {}) strictly, runs the tool and")
	f.Comment("returns its result. Arguments that break the input schema yield a")
	f.Comment("strictjson.Errors and the handler is not called; any other error is the handler's.")
	f.Func().Params(jen.Id("t").Op("*").Id("Tool")).Id("Call").Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("h").Id("ToolHandlers"), jen.Id("args").Index().Byte()).Params(jen.Op("*").Id("Result"), jen.Error()).Block(
		jen.If(jen.Len(jen.Id("args")).Op("==").Lit(0)).Block(jen.Id("args").Op("=").Index().Byte().Call(jen.Lit("{}"))),
		jen.Return(jen.Id("t").Dot("call").Call(jen.Id("ctx"), jen.Id("h"), jen.Id("args"))),
	)

	var touches []jen.Code
	for _, t := range tools {
		touches = append(touches, jen.Qual("reflect", "TypeFor").Types(jen.Id(t.Method+"Output")).Call())
	}
	f.Comment("Pretouch compiles sonic's encoders for every tool result type now, so the first")
	f.Comment("call of each tool does not pay for it.")
	f.Func().Id("Pretouch").Params().Error().Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("t")).Op(":=").Range().Index().Qual("reflect", "Type").Values(touches...)).Block(
			jen.If(jen.Err().Op(":=").Qual(sonicPkg, "Pretouch").Call(jen.Id("t")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		),
		jen.Return(jen.Nil()),
	)

	var entries []jen.Code
	for _, t := range tools {
		entries = append(entries, jen.Values(jen.Dict{
			jen.Id("Name"):     jen.Lit(t.Name),
			jen.Id("Tier"):     jen.Lit(t.Tier),
			jen.Id("Manifest"): jen.Id(manifestConst(t)),
			jen.Id("call"):     jen.Id("call" + t.Method),
		}))
	}
	f.Comment("Tools lists every tool in tools/list order (by name). Do not modify it.")
	f.Var().Id("Tools").Op("=").Index().Id("Tool").Values(entries...)

	var cases []jen.Code
	for i, t := range tools {
		cases = append(cases, jen.Case(jen.Lit(t.Name)).Block(jen.Return(jen.Op("&").Id("Tools").Index(jen.Lit(i)))))
	}
	f.Comment("LookupTool returns the tool with exactly this name (names are case-sensitive), or nil.")
	f.Func().Id("LookupTool").Params(jen.Id("name").String()).Op("*").Id("Tool").Block(
		jen.Switch(jen.Id("name")).Block(cases...),
		jen.Return(jen.Nil()),
	)

	for _, t := range tools {
		f.Commentf("call%s runs %s.", t.Method, t.Name)
		f.Func().Id("call"+t.Method).Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("h").Id("ToolHandlers"), jen.Id("args").Index().Byte()).Params(jen.Op("*").Id("Result"), jen.Error()).Block(
			jen.List(jen.Id("in"), jen.Err()).Op(":=").Id("Decode"+t.Method+"Input").Call(jen.Id("args")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.List(jen.Id("out"), jen.Err()).Op(":=").Id("h").Dot(t.Method).Call(jen.Id("ctx"), jen.Id("in")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.If(jen.Id("out").Op("==").Nil()).Block(jen.Return(jen.Nil(), jen.Qual("errors", "New").Call(jen.Lit(t.Name+": handler returned no result")))),
			jen.List(jen.Id("structured"), jen.Err()).Op(":=").Qual(sonicPkg, "Marshal").Call(jen.Id("out")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Op("&").Id("Result").Values(jen.Dict{jen.Id("Text"): jen.Id("h").Dot(t.Method + "Text").Call(jen.Id("out")), jen.Id("Structured"): jen.Id("structured")}), jen.Nil()),
		)
	}
	return render(f)
}

// manifestFile holds each tool's tools/list entry as one JSON string, and
// the whole list, precomputed so tools/list costs no encoding at run time.
func manifestFile(pkg, header string, tools []*Tool) ([]byte, error) {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	var all bytes.Buffer
	all.WriteByte('[')
	for i, t := range tools {
		if i > 0 {
			all.WriteByte(',')
		}
		all.Write(t.Manifest)
		f.Commentf("%s is the tools/list entry of %s, built from %s.", manifestConst(t), t.Name, t.File)
		f.Const().Id(manifestConst(t)).Op("=").Add(rawString(string(t.Manifest)))
	}
	all.WriteByte(']')
	f.Comment("AllToolsJSON is the JSON array of every tool's tools/list entry, in Tools order.")
	f.Const().Id("AllToolsJSON").Op("=").Add(rawString(all.String()))
	return render(f)
}

func manifestConst(t *Tool) string { return "manifest" + t.Method }

// rawString writes s as a backquoted literal when it can, so reviewers read
// the JSON without escapes.
func rawString(s string) jen.Code {
	if strings.ContainsAny(s, "`\r") {
		return jen.Lit(s)
	}
	return jen.Op("`" + s + "`")
}

// render formats a jennifer file.
func render(f *jen.File) ([]byte, error) {
	var b bytes.Buffer
	if err := f.Render(&b); err != nil {
		return nil, fmt.Errorf("rendering generated code: %w", err)
	}
	return b.Bytes(), nil
}
