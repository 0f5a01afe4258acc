// Package toolcall is the plumbing every tool shares, which depends on no
// schema: a tool's entry in the table (Tool, built by New), calling it
// (Call, Run), its result (Result) and the failure it reports to the model
// (Error). The table itself, gen.Tools, is generated from
// schema/tools/*.json: gen instantiates Tool with its ToolHandlers
// interface and Tier type, and names these types gen.Tool, gen.ToolError,
// gen.Result and gen.ToolExamples, so a handler imports gen alone.
//
// A tool's result decoder is not here: results are decoded only by tests,
// through gen/gentest, so the binary does not carry those decoders.
package toolcall

import (
	"context"
	"errors"
	"reflect"
	"sync"

	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/encoder"
)

// Error is a failure the tool reports to the model rather than to the
// client: it becomes a result with isError: true, the text block Text and
// structured content Structured, which must match the tool's output schema.
type Error struct {
	Text       string
	Structured any
}

func (e *Error) Error() string { return e.Text }

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

// AppendOutput appends a tool's output (or an Error's structured
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

// Tier is what the generated tier type is: ordered, lowest standing
// first, so that a caller of a tier may do all that lower tiers may.
type Tier interface{ ~int }

// Spec is what a tool's schema says of it, as the generated table hands
// it to New.
type Spec[T Tier] struct {
	// Name is the MCP tool name.
	Name string
	// Tier is the lowest caller tier that may run the tool.
	Tier T
	// Discoverable tools are listed to callers below Tier, who may not run them.
	Discoverable bool
	// Manifest is the tool's tools/list entry, schemas embedded verbatim.
	Manifest string
	// Examples are the calls the tool's schema shows, checked against its
	// schemas when the code is generated. Tests take their calls from here,
	// so a new tool is exercised without editing any test.
	Examples Examples
}

// Tool is one entry of the dispatch table (gen.Tools): a tool's Spec and
// the functions that decode its arguments and run it on handlers H.
type Tool[H any, T Tier] struct {
	Spec[T]

	call        func(ctx context.Context, h H, args []byte) (*Result, error)
	decodeInput func([]byte) (any, error)
}

// New makes a tool's entry from its spec, its generated argument decoder
// and the two handler methods that serve it (method expressions of H,
// such as ToolHandlers.GetSources and ToolHandlers.GetSourcesText).
func New[H any, T Tier, I, O any](s Spec[T], decode func([]byte) (*I, error), run func(H, context.Context, *I) (*O, error), text func(H, *O) string) Tool[H, T] {
	return Tool[H, T]{
		Spec: s,
		call: func(ctx context.Context, h H, args []byte) (*Result, error) {
			return call(ctx, h, args, s.Name, decode, run, text)
		},
		decodeInput: decodeAny(decode),
	}
}

// Examples are a tool's examples, as compact JSON.
type Examples struct {
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
func (t *Tool[H, T]) Call(ctx context.Context, h H, args []byte) (*Result, error) {
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
func (t *Tool[H, T]) Run(ctx context.Context, h H, args []byte) (*Result, error) {
	if len(args) == 0 {
		args = []byte("{}")
	}
	return t.call(ctx, h, args)
}

// DecodeInput decodes arguments of this tool strictly, as Call does, and
// returns them as the generated input type.
func (t *Tool[H, T]) DecodeInput(args []byte) (any, error) { return t.decodeInput(args) }

// call is the body of every tool's call: decode the arguments with the
// tool's generated decoder, run its handler and render its text. The
// result is encoded later, by whoever appends it.
func call[H, I, O any](ctx context.Context, h H, args []byte, name string, decode func([]byte) (*I, error), run func(H, context.Context, *I) (*O, error), text func(H, *O) string) (*Result, error) {
	in, err := decode(args)
	if err != nil {
		return nil, err
	}
	out, err := run(h, ctx, in)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, errors.New(name + ": handler returned no result")
	}
	if app, ok := textAppenders[reflect.TypeFor[*O]()]; ok {
		return &Result{out: out, appendText: app}, nil
	}
	return &Result{Text: text(h, out), out: out}, nil
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
func (t *Tool[H, T]) Listed(tier T) bool { return t.Tier <= tier || t.Discoverable }
