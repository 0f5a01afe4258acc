// Package tooltable is the plumbing every tool shares, which depends on no
// schema: a tool's entry in the table (Tool, built by New), calling it
// (Call, Run), its result (Result) and the failure it reports to the model
// (Error), and what its result is written with (Output, Writer). The
// table itself, gen.Tools, is generated from schema/tools/*.json: gen
// instantiates Tool with its ToolHandlers interface and Tier type, and
// names these types gen.Tool, gen.ToolError, gen.Result, gen.ToolOutput
// and gen.ToolExamples, so a handler imports gen alone. Each output type's
// encoder is generated too (its AppendJSON); nothing here looks a type up
// at run time.
//
// A tool's result decoder is not here: results are decoded only by tests,
// through gen/gentest, so the binary does not carry those decoders.
package tooltable

import (
	"context"
	"errors"
)

// Error is a failure the tool reports to the model rather than to the
// client: it becomes a result with isError: true, the text block Text and
// structured content Structured, one of the tool's generated output types
// (or nil, written null), which must match its output schema.
type Error struct {
	Text       string
	Structured Output
}

func (e *Error) Error() string { return e.Text }

// Result is a successful tool call: the text block and the structured
// content as JSON. Run leaves both empty and keeps the output, so that
// the transport writes them straight into the response (AppendText,
// AppendStructured) rather than into a string or a buffer of their own
// that is then copied; Call fills them.
type Result struct {
	Text       string
	Structured []byte
	out        Output
	handlers   any
	// appendText renders out's text with handlers (see New).
	appendText func(h any, dst []byte, out Output) []byte
}

// AppendText appends the result's text block to dst.
func (r *Result) AppendText(dst []byte) []byte {
	if r.appendText == nil {
		return append(dst, r.Text...)
	}
	return r.appendText(r.handlers, dst, r.out)
}

// AppendStructured appends the structured content, as JSON, to dst.
func (r *Result) AppendStructured(dst []byte) ([]byte, error) {
	if r.Structured != nil || r.out == nil {
		return append(dst, r.Structured...), nil
	}
	return r.out.AppendJSON(dst)
}

// Tier is what the generated tier type is: ordered, lowest standing
// first, so that a caller of a tier may do all that lower tiers may.
type Tier interface{ ~int }

// Listing is what the generated listedWhen type is: the condition under
// which tools/list shows a tool, its zero value "always".
type Listing interface{ ~int }

// Spec is what a tool's schema says of it, as the generated table hands
// it to New.
type Spec[T Tier, L Listing] struct {
	// Name is the MCP tool name.
	Name string
	// Tier is the lowest caller tier that may run the tool.
	Tier T
	// Discoverable tools answer callers below Tier who call them with the
	// tier needed; they are not listed to them.
	Discoverable bool
	// ListedWhen is the schema's "listedWhen": the condition under which
	// tools/list shows the tool (gen.ListedWhenPeers, ...), or the zero
	// value when it is always listed.
	ListedWhen L
	// Manifest is the tool's tools/list entry, schemas embedded verbatim.
	Manifest string
	// Examples are the calls the tool's schema shows, checked against its
	// schemas when the code is generated. Tests take their calls from here,
	// so a new tool is exercised without editing any test.
	Examples Examples
}

// Tool is one entry of the dispatch table (gen.Tools): a tool's Spec and
// the functions that decode its arguments and run it on handlers H.
type Tool[H any, T Tier, L Listing] struct {
	Spec[T, L]

	call        func(ctx context.Context, h H, args []byte) (*Result, error)
	decodeInput func([]byte) (any, error)
}

// New makes a tool's entry from its spec, its generated argument decoder
// and the handler methods that serve it (method expressions of H, such as
// ToolHandlers.GetSources and ToolHandlers.AppendGetSourcesText; a text
// method that returns a string goes through TextString). The output type's
// generated AppendJSON encodes its results: a type without one does not
// compile here.
func New[H any, T Tier, L Listing, I, O any, P interface {
	*O
	Output
}](s Spec[T, L], decode func([]byte) (*I, error), run func(H, context.Context, *I) (*O, error), text func(H, []byte, *O) []byte) Tool[H, T, L] {
	appendText := func(h any, dst []byte, out Output) []byte { return text(h.(H), dst, out.(P)) }
	return Tool[H, T, L]{
		Spec: s,
		call: func(ctx context.Context, h H, args []byte) (*Result, error) {
			return call[H, I, O, P](ctx, h, args, s.Name, decode, run, appendText)
		},
		decodeInput: decodeAny(decode),
	}
}

// TextString adapts a text method that returns the text as a string to
// the appending form New takes. Most tools' text is rendered this way; a
// tool answering nearly every call appends its text into the response
// buffer instead, so that answering makes no string of it.
func TextString[H, O any](text func(H, *O) string) func(H, []byte, *O) []byte {
	return func(h H, dst []byte, out *O) []byte { return append(dst, text(h, out)...) }
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
// and returns its result, its text and structured content filled in.
// Arguments that break the input schema yield a strictjson.Errors and the
// handler is not called; any other error is the handler's or the
// encoder's.
func (t *Tool[H, T, L]) Call(ctx context.Context, h H, args []byte) (*Result, error) {
	res, err := t.Run(ctx, h, args)
	if err != nil {
		return nil, err
	}
	res.Text, res.appendText = string(res.AppendText(nil)), nil
	if res.Structured, err = res.out.AppendJSON(nil); err != nil {
		return nil, err
	}
	return res, nil
}

// Run is Call without rendering the text nor encoding the structured
// content: the result's AppendText and AppendStructured write them where
// they are wanted.
func (t *Tool[H, T, L]) Run(ctx context.Context, h H, args []byte) (*Result, error) {
	if len(args) == 0 {
		args = []byte("{}")
	}
	return t.call(ctx, h, args)
}

// DecodeInput decodes arguments of this tool strictly, as Call does, and
// returns them as the generated input type.
func (t *Tool[H, T, L]) DecodeInput(args []byte) (any, error) { return t.decodeInput(args) }

// call is the body of every tool's call: decode the arguments with the
// tool's generated decoder and run its handler. The result's text and
// structured content are written later, by whoever appends them.
func call[H, I, O any, P interface {
	*O
	Output
}](ctx context.Context, h H, args []byte, name string, decode func([]byte) (*I, error), run func(H, context.Context, *I) (*O, error), appendText func(any, []byte, Output) []byte) (*Result, error) {
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
	return &Result{out: P(out), handlers: h, appendText: appendText}, nil
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

// Listed reports whether a caller of tier may see t in tools/list: every
// tool at or below the caller's tier, and none above it, so an anonymous
// caller is never shown a tool that needs a token. The generated
// ToolsListJSON follows the same rule; a server further leaves out the
// tools whose ListedWhen its configuration or the caller does not meet.
func (t *Tool[H, T, L]) Listed(tier T) bool { return t.Tier <= tier }
