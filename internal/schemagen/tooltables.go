package schemagen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/three-good-sources/3gs/internal/schema"
)

// appendsText names the tools whose text method appends the text to a
// buffer (AppendXText(dst, out) []byte) rather than returning a string
// (XText(out) string): the ones that answer nearly every call, whose text
// the transport then writes straight into the response, making no string
// of it. BenchmarkHandle/mix-v1 (internal/mcp) measures what it saves
// (on get_sources, 12% fewer bytes per call when it was made); a tool
// belongs here only with such a figure.
var appendsText = map[string]bool{"get_sources": true}

// textMethod is the name of t's text method in ToolHandlers.
func textMethod(t *schema.Tool) string {
	if appendsText[t.Name] {
		return "Append" + t.Method + "Text"
	}
	return t.Method + "Text"
}

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
	f.Comment("accompanies it (appending it to a buffer, for the few tools that answer nearly")
	f.Comment("every call). A *ToolError from the first becomes a result with isError: true;")
	f.Comment("any other error is an internal error.")
	var methods []jen.Code
	for _, t := range tools {
		methods = append(methods,
			jen.Commentf("%s serves %s: %s.", t.Method, t.Name, t.Title),
			jen.Id(t.Method).Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("in").Op("*").Id(t.Method+"Input")).Params(jen.Op("*").Id(t.Method+"Output"), jen.Error()),
		)
		out := jen.Id("out").Op("*").Id(t.Method + "Output")
		if appendsText[t.Name] {
			methods = append(methods,
				jen.Commentf("%s appends the plain text of a %s result to dst.", textMethod(t), t.Name),
				jen.Id(textMethod(t)).Params(jen.Id("dst").Index().Byte(), out).Index().Byte(),
			)
		} else {
			methods = append(methods,
				jen.Commentf("%s renders a %s result as plain text.", textMethod(t), t.Name),
				jen.Id(textMethod(t)).Params(out).String(),
			)
		}
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

// tooltablePkg is the runtime the dispatch table is built on.
const tooltablePkg = "github.com/three-good-sources/3gs/internal/tooltable"

// dispatchFile writes the dispatch table: for each tool its name, tier,
// manifest, examples and the functions that decode its arguments, run it
// and render its text; tooltable.New requires its output type's generated
// AppendJSON, which encodes its results. The plumbing they share (Tool, Call, the call itself) is the
// hand-written internal/tooltable, since it does not depend on any schema;
// this file names its types for the package's ToolHandlers and Tier.
func dispatchFile(pkg, header string, tools []*schema.Tool) ([]byte, error) {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	f.ImportName(tooltablePkg, "tooltable")
	f.Comment("Tool is one entry of Tools (see tooltable.Tool).")
	f.Type().Id("Tool").Op("=").Qual(tooltablePkg, "Tool").Types(jen.Id("ToolHandlers"), jen.Id("Tier"), jen.Id("ListedWhen"))
	f.Comment("ToolError is a failure a tool reports to the model (see tooltable.Error).")
	f.Type().Id("ToolError").Op("=").Qual(tooltablePkg, "Error")
	f.Comment("ToolOutput is what every tool's output type is: it appends itself as JSON (see")
	f.Comment("tooltable.Output), by its AppendJSON in " + ToolsOutputEncodeFile + ".")
	f.Type().Id("ToolOutput").Op("=").Qual(tooltablePkg, "Output")
	f.Comment("Result is a successful tool call (see tooltable.Result).")
	f.Type().Id("Result").Op("=").Qual(tooltablePkg, "Result")
	f.Comment("ToolExamples are a tool's examples, as compact JSON (see tooltable.Examples).")
	f.Type().Id("ToolExamples").Op("=").Qual(tooltablePkg, "Examples")

	var entries []jen.Code
	for _, t := range tools {
		entries = append(entries, jen.Line().Qual(tooltablePkg, "New").Call(
			jen.Qual(tooltablePkg, "Spec").Types(jen.Id("Tier"), jen.Id("ListedWhen")).Values(toolSpec(t)),
			jen.Id("Decode"+t.Method+"Input"),
			jen.Id("ToolHandlers").Dot(t.Method),
			textArg(t),
		))
	}
	f.Comment("Tools lists every tool in tools/list order (by name). Do not modify it.")
	f.Var().Id("Tools").Op("=").Index().Id("Tool").Values(append(entries, jen.Line())...)

	var cases []jen.Code
	for i, t := range tools {
		cases = append(cases, jen.Case(jen.Lit(t.Name)).Block(jen.Return(jen.Op("&").Id("Tools").Index(jen.Lit(i)))))
	}
	f.Comment("LookupTool returns the tool with exactly this name (names are case-sensitive), or nil.")
	f.Func().Id("LookupTool").Params(jen.Id("name").String()).Op("*").Id("Tool").Block(
		jen.Switch(jen.Id("name")).Block(cases...),
		jen.Return(jen.Nil()),
	)
	f.Comment("ListedFor names, in Tools order, the tools a caller of tier sees in tools/list.")
	f.Comment("Tests that need \"the tools of a tier\" read it, rather than a list or a count of")
	f.Comment("their own.")
	f.Func().Id("ListedFor").Params(jen.Id("tier").Id("Tier")).Index().String().Block(
		jen.Var().Id("names").Index().String(),
		jen.For(jen.Id("i").Op(":=").Range().Id("Tools")).Block(
			jen.If(jen.Id("Tools").Index(jen.Id("i")).Dot("Listed").Call(jen.Id("tier"))).Block(
				jen.Id("names").Op("=").Append(jen.Id("names"), jen.Id("Tools").Index(jen.Id("i")).Dot("Name")),
			),
		),
		jen.Return(jen.Id("names")),
	)
	return render(f)
}

// textArg is the text method New gets for t: ToolHandlers' own when it
// appends, else adapted by tooltable.TextString.
func textArg(t *schema.Tool) jen.Code {
	if appendsText[t.Name] {
		return jen.Id("ToolHandlers").Dot(textMethod(t))
	}
	return jen.Qual(tooltablePkg, "TextString").Call(jen.Id("ToolHandlers").Dot(textMethod(t)))
}

// toolSpec is the tooltable.Spec of t: what its schema says of it.
func toolSpec(t *schema.Tool) jen.Dict {
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
	return jen.Dict{
		jen.Id("Name"):         jen.Lit(t.Name),
		jen.Id("Tier"):         jen.Id(tierConst(t.Tier)),
		jen.Id("Discoverable"): jen.Lit(t.Discoverable),
		jen.Id("ListedWhen"):   jen.Id(listedWhenConst(t.ListedWhen)),
		jen.Id("Manifest"):     jen.Id(manifestVar(t)),
		jen.Id("Examples"):     jen.Qual(tooltablePkg, "Examples").Values(examples),
	}
}

// manifestFile embeds each tool's tools/list entry from its JSON file
// (ManifestJSONFile), and each tier's whole tools/list array from its own
// (ToolsListJSONFile, written from toolsLists), so tools/list costs no
// encoding at run time and its arrays lie in the binary's read-only data:
// joined at initialization they were 200 KB of every server's live heap,
// which the collector lets grow to twice itself, whether or not a client
// ever asked for the list.
func manifestFile(pkg, header string, tools []*schema.Tool) ([]byte, error) {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	f.Anon("embed")
	for _, t := range tools {
		f.Commentf("%s is the tools/list entry of %s, built from %s.", manifestVar(t), t.Name, t.File)
		f.Comment("//go:embed " + ManifestJSONFile(t.Name))
		f.Var().Id(manifestVar(t)).String()
	}
	var lists []jen.Code
	for _, tier := range schema.Tiers {
		v := "toolsList" + strings.TrimPrefix(tierConst(tier), "Tier")
		f.Commentf("%s is the tools/list array seen by a caller of the %s tier.", v, tier)
		f.Comment("//go:embed " + ToolsListJSONFile(tier))
		f.Var().Id(v).String()
		lists = append(lists, jen.Line().Id(tierConst(tier)).Op(":").Id(v))
	}
	f.Comment("ToolsListJSON holds, for each caller tier, the JSON array of the tools/list")
	f.Comment("entries that tier sees, in Tools order: every tool at or below the tier, and")
	f.Comment("the discoverable ones above it.")
	f.Var().Id("ToolsListJSON").Op("=").Index(jen.Id("NumTiers")).String().Values(append(lists, jen.Line())...)
	return render(f)
}

// toolsLists is, for each tier of schema.Tiers, the JSON array of the
// tools/list entries a caller of that tier sees.
func toolsLists(tools []*schema.Tool) [][]byte {
	lists := make([][]byte, len(schema.Tiers))
	for tier := range schema.Tiers {
		list := []byte("[")
		for _, t := range tools {
			if !visible(t, tier) {
				continue
			}
			if len(list) > 1 {
				list = append(list, ',')
			}
			list = append(list, t.Manifest...)
		}
		lists[tier] = append(list, ']')
	}
	return lists
}

// visible reports whether a caller of tier (an index into schema.Tiers) may
// see t in tools/list: the list a node with every listedWhen condition met
// shows that tier.
func visible(t *schema.Tool, tier int) bool {
	return schema.TierRank(t.Tier) <= tier
}

// tierConst is the Go constant of a tier name: public → TierPublic.
func tierConst(name string) string { return "Tier" + strings.ToUpper(name[:1]) + name[1:] }

// listedWhenConst is the Go constant of a listedWhen condition: peers →
// ListedWhenPeers, and none → ListedAlways.
func listedWhenConst(name string) string {
	if name == "" {
		return "ListedAlways"
	}
	return "ListedWhen" + schema.GoName(name)
}

// listedWhenDecls declares the conditions a tool's "listedWhen" may
// name (schema.ListedWhenConditions, the one place they are spelled), as
// the constants of a type of their own: a server decides each (mcp.Listed)
// with a switch over them rather than over strings.
func listedWhenDecls(f *jen.File) {
	f.Comment("ListedWhen is the condition under which tools/list shows a tool: its schema's")
	f.Comment("\"listedWhen\", or ListedAlways when it has none.")
	f.Type().Id("ListedWhen").Int()
	defs := []jen.Code{jen.Comment("ListedAlways: the schema names no condition."), jen.Id("ListedAlways").Id("ListedWhen").Op("=").Iota()}
	names := []jen.Code{jen.Lit("")}
	for _, c := range schema.ListedWhenConditions {
		defs = append(defs, jen.Comment(listedWhenConst(c.Name)+": \""+c.Name+"\", "+c.Says+"."), jen.Id(listedWhenConst(c.Name)))
		names = append(names, jen.Lit(c.Name))
	}
	defs = append(defs, jen.Comment("NumListedWhen counts the conditions, ListedAlways included."), jen.Id("NumListedWhen").Op("=").Lit(len(schema.ListedWhenConditions)+1))
	f.Const().Defs(defs...)
	f.Var().Id("listedWhenNames").Op("=").Index(jen.Id("NumListedWhen")).String().Values(names...)
	f.Comment("String is the condition as tool schemas spell it; \"\" for ListedAlways.")
	f.Func().Params(jen.Id("l").Id("ListedWhen")).Id("String").Params().String().Block(
		jen.If(jen.Id("l").Op("<").Lit(0).Op("||").Id("l").Op(">=").Id("NumListedWhen")).Block(jen.Return(jen.Lit("unknown"))),
		jen.Return(jen.Id("listedWhenNames").Index(jen.Id("l"))),
	)
}

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
	f.Comment("String is the tier's name as schemas and tokens files spell it.")
	f.Func().Params(jen.Id("t").Id("Tier")).Id("String").Params().String().Block(
		jen.If(jen.Id("t").Op("<").Lit(0).Op("||").Id("t").Op(">=").Id("NumTiers")).Block(jen.Return(jen.Lit("unknown"))),
		jen.Return(jen.Id("tierNames").Index(jen.Id("t"))),
	)
	f.Comment("ParseTier reads a tier name, exactly as spelled (names are lower case).")
	f.Func().Id("ParseTier").Params(jen.Id("s").String()).Params(jen.Id("Tier"), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("i"), jen.Id("name")).Op(":=").Range().Id("tierNames")).Block(
			jen.If(jen.Id("name").Op("==").Id("s")).Block(jen.Return(jen.Id("Tier").Call(jen.Id("i")), jen.True())),
		),
		jen.Return(jen.Lit(0), jen.False()),
	)
	listedWhenDecls(f)
	return render(f)
}

func manifestVar(t *schema.Tool) string { return "manifest" + t.Method }

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
