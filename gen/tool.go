package gen

// This file is written by hand: it is the plumbing every tool shares,
// which does not depend on any schema. The tables that list the tools
// (tools_dispatch_gen.go) are generated from schema/tools/*.json.

import (
	"context"
	"errors"
	"reflect"
	"sync"

	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/encoder"
)

// ToolError is a failure the tool reports to the model rather than to the
// client: it becomes a result with isError: true, the text block Text and
// structured content Structured, which must match the tool's output schema.
type ToolError struct {
	Text       string
	Structured any
}

func (e *ToolError) Error() string { return e.Text }

// Result is a successful tool call: the text block and the structured
// content as JSON. Run leaves Structured nil and keeps the output, so that
// the transport encodes it straight into the response (AppendStructured)
// rather than into a buffer of its own that is then copied.
type Result struct {
	Text       string
	Structured []byte
	out        any
	// appendText, for an output with a registered text appender, writes
	// the text in place of Text, which Run then leaves empty (Call fills
	// it): see AppendText.
	appendText func(dst []byte, v any) []byte
}

// AppendText appends the result's text block to dst.
func (r *Result) AppendText(dst []byte) []byte {
	if r.appendText != nil {
		return r.appendText(dst, r.out)
	}
	return append(dst, r.Text...)
}

// textAppenders render tool outputs' text blocks into a buffer rather
// than a new string, by the output's pointer type; see
// RegisterTextAppender. Registered by package initialization and only
// read afterwards.
var textAppenders = map[reflect.Type]func(dst []byte, v any) []byte{}

// RegisterTextAppender makes app render the text block of outputs of type
// *T, appending exactly what the tool's text handler returns. A transport
// that copies the text into its response anyway (Run, then AppendText)
// then makes no string of it: for an often-called tool, most of the
// garbage a call made. Call it from an init function.
func RegisterTextAppender[T any](app func(dst []byte, v *T) []byte) {
	textAppenders[reflect.TypeFor[*T]()] = func(dst []byte, v any) []byte { return app(dst, v.(*T)) }
}

// encodeBufs hold the slice EncodeInto writes through, so that passing its
// address does not move a slice header to the heap on every call.
var encodeBufs = sync.Pool{New: func() any { return new([]byte) }}

// AppendStructured appends the structured content, as JSON, to dst.
func (r *Result) AppendStructured(dst []byte) ([]byte, error) {
	if r.Structured != nil || r.out == nil {
		return append(dst, r.Structured...), nil
	}
	return AppendOutput(dst, r.out)
}

// outputEncoders are the encoders tool outputs have of their own, by the
// output's pointer type; see RegisterOutputEncoder. They are registered by
// package initialization and only read afterwards.
var outputEncoders = map[reflect.Type]func(dst []byte, v any) ([]byte, error){}

// RegisterOutputEncoder makes enc the encoder of outputs of type *T, in
// place of sonic's: enc must write exactly what sonic writes for them. A
// tool that answers often registers one so that answering compiles no
// encoder (see tools/getsources_json.go). Call it from an init function.
func RegisterOutputEncoder[T any](enc func(dst []byte, v *T) ([]byte, error)) {
	outputEncoders[reflect.TypeFor[*T]()] = func(dst []byte, v any) ([]byte, error) { return enc(dst, v.(*T)) }
}

// AppendOutput appends a tool's output (or a ToolError's structured
// content), as JSON, to dst: by its registered encoder when it has one,
// else by sonic's.
func AppendOutput(dst []byte, v any) ([]byte, error) {
	if enc, ok := outputEncoders[reflect.TypeOf(v)]; ok {
		start := len(dst)
		dst, err := enc(dst, v)
		if err != nil {
			return dst[:start], err
		}
		return dst, nil
	}
	b := encodeBufs.Get().(*[]byte)
	*b = dst
	err := encoder.EncodeInto(b, v, 0)
	dst, *b = *b, nil
	encodeBufs.Put(b)
	return dst, err
}

// Tool is one entry of the dispatch table, Tools.
type Tool struct {
	// Name is the MCP tool name.
	Name string
	// Tier is the lowest caller tier that may run the tool.
	Tier Tier
	// Discoverable tools are listed to callers below Tier, who may not run them.
	Discoverable bool
	// Manifest is the tool's tools/list entry, schemas embedded verbatim.
	Manifest string
	// Examples are the calls the tool's schema shows, checked against its
	// schemas when the code is generated. Tests take their calls from here,
	// so a new tool is exercised without editing any test.
	Examples ToolExamples

	call                      func(ctx context.Context, h ToolHandlers, args []byte) (*Result, error)
	decodeInput, decodeOutput func([]byte) (any, error)
}

// ToolExamples are a tool's examples, as compact JSON.
type ToolExamples struct {
	// Arguments are argument objects the input schema accepts; the first
	// is the tool's typical call.
	Arguments []string
	// Invalid is an argument object the input schema refuses, or "".
	Invalid string
	// Result is a structured result the output schema accepts.
	Result string
}

// Call decodes args (a JSON object; empty means {}) strictly, runs the tool
// and returns its result. Arguments that break the input schema yield a
// strictjson.Errors and the handler is not called; any other error is the
// handler's.
func (t *Tool) Call(ctx context.Context, h ToolHandlers, args []byte) (*Result, error) {
	res, err := t.Run(ctx, h, args)
	if err != nil {
		return nil, err
	}
	if res.appendText != nil {
		res.Text = string(res.AppendText(nil))
	}
	if res.Structured == nil {
		if res.Structured, err = sonic.Marshal(res.out); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Run is Call without encoding the structured content, nor making the
// text a string when its output has a text appender: the result's
// AppendStructured and AppendText write them where they are wanted.
func (t *Tool) Run(ctx context.Context, h ToolHandlers, args []byte) (*Result, error) {
	if len(args) == 0 {
		args = []byte("{}")
	}
	return t.call(ctx, h, args)
}

// DecodeInput decodes arguments of this tool strictly, as Call does, and
// returns them as the generated input type.
func (t *Tool) DecodeInput(args []byte) (any, error) { return t.decodeInput(args) }

// DecodeOutput decodes a structured result of this tool strictly; tests use
// it to hold results to the output schema.
func (t *Tool) DecodeOutput(data []byte) (any, error) { return t.decodeOutput(data) }

// callTool is the body of every tool's call: decode the arguments with the
// tool's generated decoder, run its handler, encode the result with sonic
// and render its text. The result is encoded later, by whoever appends it.
func callTool[I, O any](ctx context.Context, args []byte, name string, decode func([]byte) (*I, error), run func(context.Context, *I) (*O, error), text func(*O) string) (*Result, error) {
	in, err := decode(args)
	if err != nil {
		return nil, err
	}
	out, err := run(ctx, in)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, errors.New(name + ": handler returned no result")
	}
	if app, ok := textAppenders[reflect.TypeFor[*O]()]; ok {
		return &Result{out: out, appendText: app}, nil
	}
	return &Result{Text: text(out), out: out}, nil
}

// decodeAny adapts a generated decoder to the untyped form the table
// keeps, with no typed nil inside a non-nil interface.
func decodeAny[T any](decode func([]byte) (*T, error)) func([]byte) (any, error) {
	return func(data []byte) (any, error) {
		v, err := decode(data)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
}

// Listed reports whether a caller of tier sees t in tools/list: every tool
// at or below the caller's tier, and the discoverable ones above it. The
// generated ToolsListJSON follows the same rule.
func (t *Tool) Listed(tier Tier) bool { return t.Tier <= tier || t.Discoverable }

// ListedFor names, in Tools order, the tools a caller of tier sees in
// tools/list. Tests that need "the tools of a tier" read it, rather than
// a list or a count of their own.
func ListedFor(tier Tier) []string {
	var names []string
	for i := range Tools {
		if Tools[i].Listed(tier) {
			names = append(names, Tools[i].Name)
		}
	}
	return names
}
