package schemagen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/three-good-sources/3gs/internal/schema"
)

const sonicPkg = "github.com/bytedance/sonic"

// handlersFile declares ToolHandlers, one method per tool, so a tool added
// to schema/tools/ does not compile until internal/ implements it. Tools
// whose input takes no parameters get their empty struct here, because
// go-jsonschema emits nothing for an object without properties.
func handlersFile(pkg, header string, tools []*schema.Tool) ([]byte, error) {
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

// dispatchFile writes the dispatch table: for each tool its name, tier,
// manifest, examples and the functions that decode its arguments and run
// it. The plumbing they share (Tool, Call, callTool) is hand-written in
// gen/tool.go, since it does not depend on any schema.
func dispatchFile(pkg, header string, tools []*schema.Tool) ([]byte, error) {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	f.ImportName(sonicPkg, "sonic")

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
		var args []jen.Code
		for _, a := range t.Examples.Arguments {
			args = append(args, jen.Line().Add(rawString(a)))
		}
		examples := jen.Dict{
			jen.Id("Arguments"): jen.Index().String().Values(append(args, jen.Line())...),
			jen.Id("Result"):    rawString(t.Examples.Result),
		}
		if t.Examples.Invalid != "" {
			examples[jen.Id("Invalid")] = rawString(t.Examples.Invalid)
		}
		entries = append(entries, jen.Values(jen.Dict{
			jen.Id("Name"):         jen.Lit(t.Name),
			jen.Id("Tier"):         jen.Id(tierConst(t.Tier)),
			jen.Id("Discoverable"): jen.Lit(t.Discoverable),
			jen.Id("Manifest"):     jen.Id(manifestConst(t)),
			jen.Id("Examples"):     jen.Id("ToolExamples").Values(examples),
			jen.Id("call"): jen.Func().Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("h").Id("ToolHandlers"), jen.Id("args").Index().Byte()).Params(jen.Op("*").Id("Result"), jen.Error()).Block(
				jen.Return(jen.Id("callTool").Call(jen.Id("ctx"), jen.Id("args"), jen.Lit(t.Name), jen.Id("Decode"+t.Method+"Input"), jen.Id("h").Dot(t.Method), jen.Id("h").Dot(t.Method+"Text"))),
			),
			jen.Id("decodeInput"):  jen.Id("decodeAny").Call(jen.Id("Decode" + t.Method + "Input")),
			jen.Id("decodeOutput"): jen.Id("decodeAny").Call(jen.Id("Decode" + t.Method + "Output")),
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
	return render(f)
}

// manifestFile holds each tool's tools/list entry as one JSON string, and
// the list each tier sees, precomputed so tools/list costs no encoding at
// run time.
func manifestFile(pkg, header string, tools []*schema.Tool) ([]byte, error) {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	for _, t := range tools {
		f.Commentf("%s is the tools/list entry of %s, built from %s.", manifestConst(t), t.Name, t.File)
		f.Const().Id(manifestConst(t)).Op("=").Add(rawString(string(t.Manifest)))
	}
	var lists []jen.Code
	for tier := range schema.Tiers {
		var list bytes.Buffer
		list.WriteByte('[')
		for _, t := range tools {
			if !visible(t, tier) {
				continue
			}
			if list.Len() > 1 {
				list.WriteByte(',')
			}
			list.Write(t.Manifest)
		}
		list.WriteByte(']')
		lists = append(lists, jen.Line().Id(tierConst(schema.Tiers[tier])).Op(":").Add(rawString(list.String())))
	}
	f.Comment("ToolsListJSON holds, for each caller tier, the JSON array of the tools/list")
	f.Comment("entries that tier sees, in Tools order: every tool at or below the tier, and")
	f.Comment("the discoverable ones above it.")
	f.Var().Id("ToolsListJSON").Op("=").Index(jen.Id("NumTiers")).String().Values(append(lists, jen.Line())...)
	return render(f)
}

// visible reports whether a caller of tier (an index into schema.Tiers) sees t in
// tools/list.
func visible(t *schema.Tool, tier int) bool {
	return schema.TierRank(t.Tier) <= tier || t.Discoverable
}

// tierConst is the Go constant of a tier name: public → TierPublic.
func tierConst(name string) string { return "Tier" + strings.ToUpper(name[:1]) + name[1:] }

// tiersFile declares the caller tiers in order of standing. The names come
// from schema.Tiers, the one place tiers are spelled.
func tiersFile(pkg, header string) ([]byte, error) {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	f.Comment("Tier is a caller's standing, and the lowest standing a tool requires. A higher")
	f.Comment("tier may do everything a lower one may.")
	f.Type().Id("Tier").Int()
	var defs []jen.Code
	for i, name := range schema.Tiers {
		if i == 0 {
			defs = append(defs, jen.Id(tierConst(name)).Id("Tier").Op("=").Iota())
		} else {
			defs = append(defs, jen.Id(tierConst(name)))
		}
	}
	defs = append(defs, jen.Comment("NumTiers counts the tiers."), jen.Id("NumTiers").Op("=").Lit(len(schema.Tiers)))
	f.Const().Defs(defs...)
	var names []jen.Code
	for _, name := range schema.Tiers {
		names = append(names, jen.Lit(name))
	}
	f.Var().Id("tierNames").Op("=").Index(jen.Id("NumTiers")).String().Values(names...)
	return render(f)
}

func manifestConst(t *schema.Tool) string { return "manifest" + t.Method }

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

// contractGoFile holds the contract version, which the server reports in
// initialize, server/discover and /health.
func contractGoFile(pkg, version string) ([]byte, error) {
	f := jen.NewFile(pkg)
	f.HeaderComment(generatedHeaderStem + "schema/" + schema.ContractFile + ". DO NOT EDIT.")
	f.Comment("ContractVersion is the version of the tool contract (schema/" + schema.ContractFile + "). Its major")
	f.Comment("number goes up with every change that can break a client; 3gs schema diff says")
	f.Comment("which changes do.")
	f.Const().Id("ContractVersion").Op("=").Lit(version)
	return render(f)
}
