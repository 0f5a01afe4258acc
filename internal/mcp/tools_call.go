package mcp

// tools/call: the arguments checked and the tool run, its result (or its
// failure) written as the content and structured content of the answer.

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/strictjson"
	"github.com/three-good-sources/3gs/internal/tooltable"
)

// MaxArgumentBytes bounds a tool call's arguments, checked before they are
// decoded, so an oversized object costs no decode. The largest call the
// schemas allow, an upsert_category with every string at its maximum
// length, is about 47 KB in ASCII and 170 KB written in four-byte
// characters; both fit (TestArgumentLimit builds them). Only text padded
// with \u escapes could be valid and still not fit.
const MaxArgumentBytes = 256 << 10

func (sess *Session) callTool(ctx context.Context, req *Request, modern bool, dst []byte) ([]byte, *jsonrpc.Error) {
	p, name := &req.p, req.name
	if p.Name == nil {
		return nil, invalidParams("name", "required field is missing")
	}
	if !req.nameOK {
		return nil, invalidParams("name", "must be a string")
	}
	c, perr := sess.caller(ctx, p)
	if perr != nil {
		return nil, perr
	}
	tool := gen.LookupTool(name)
	// A tool the caller may not even see answers as if it did not exist,
	// so probing names reveals nothing.
	if tool == nil || tool.Tier > c.Tier && !tool.Discoverable {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Tool not found: " + jsonrpc.Brief(name) + sess.srv.replicaNote()}
	}
	if tool.Tier > c.Tier {
		tier := tool.Tier.String()
		data := tierProblem{RequiredTier: tier, Hint: tokenHint(tier)}
		switch {
		case c.Presented && !c.Authenticated():
			// Not "Authentication required": the caller did send a token,
			// and needs to hear that it is the token that is wrong.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeAuthRequired, Message: tokenNotRecognised, Data: data}
		case !c.Authenticated():
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeAuthRequired, Message: "Authentication required: " + jsonrpc.Brief(name) + " needs a token of tier " + tier + "; " + tokenHowTo(tier), Data: data}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeForbidden, Message: "Insufficient permissions: " + jsonrpc.Brief(name) + " needs a token of tier " + tier + "; " + tokenHowTo(tier), Data: data}
	}
	// A public caller is what a context without one means, so the common
	// anonymous call costs no context (unless an outer one must be hidden).
	if c != (auth.Caller{}) || auth.CallerFrom(ctx) != (auth.Caller{}) {
		ctx = auth.WithCaller(ctx, c)
	}
	// The catalog initialize gave this session, for get_sources, which
	// would otherwise list the categories (no other tool reads it, and the
	// context costs an allocation); a modern request has no session, and
	// no catalog it is known to hold.
	if v := sess.catalog.Load(); v != nil && !modern && name == gen.ToolGetSources {
		ctx = tooltable.WithCatalog(ctx, *v)
	}
	args := []byte(p.Arguments)
	if string(args) == "null" {
		args = nil
	}
	if len(args) > MaxArgumentBytes {
		return nil, invalidParams("arguments", "longer than "+strconv.Itoa(MaxArgumentBytes)+" bytes")
	}
	res, err := tool.Run(ctx, sess.srv.handlers, args)
	if err == nil {
		// The text is rendered into a pooled buffer and quoted from its
		// bytes into the response, so a confident answer makes no text of
		// its own: BenchmarkHandle/get_sources, 1,158 B and 9 allocations
		// per call, against 5,090 B and 17 without the pool; on the
		// benchmark mix, whose unsure answers allocate most (issue 49),
		// 1.7% of the bytes.
		tb := textBufs.Get().(*[]byte)
		*tb = res.AppendText((*tb)[:0])
		start := len(dst)
		dst, err = appendToolResult(dst, modern, *tb, res.AppendStructured, false)
		if cap(*tb) <= maxPooledText {
			textBufs.Put(tb)
		}
		if err != nil {
			return dst[:start], sess.internal(name, err)
		}
		return dst, nil
	}
	if argErrs := (strictjson.Errors)(nil); errors.As(err, &argErrs) {
		first := argErrs[0]
		problem := paramsProblem{Path: argumentsPath(first.Path), Reason: first.Reason}
		if len(argErrs) > 1 {
			for _, a := range argErrs {
				problem.Errors = append(problem.Errors, paramsProblem{Path: argumentsPath(a.Path), Reason: a.Reason})
			}
		}
		return nil, paramsError(problem)
	}
	if toolErr := (*gen.ToolError)(nil); errors.As(err, &toolErr) {
		start := len(dst)
		dst, err = appendToolResult(dst, modern, toolErr.Text, func(dst []byte) ([]byte, error) { return tooltable.AppendOutput(dst, toolErr.Structured) }, true)
		if err != nil {
			return dst[:start], sess.internal(name, err)
		}
		return dst, nil
	}
	return nil, sess.internal(name, err)
}

// textBufs hold tool results' text while it is quoted into a response.
var textBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledText keeps a rare huge text from pinning its memory.
const maxPooledText = 64 << 10

// argumentsPath places a decoder's path inside params: "arguments.query",
// or "arguments" itself for a problem with the arguments as a whole (such
// as neither of two parameters of which one is needed).
func argumentsPath(path string) string {
	if path == "" {
		return "arguments"
	}
	return "arguments." + path
}

func (sess *Session) internal(tool string, err error) *jsonrpc.Error {
	sess.srv.log.Error("tool failed", "tool", tool, "err", err)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
}

// appendToolResult appends a CallToolResult with one text block and the
// structured content, which structured appends; modern results are marked
// complete.
func appendToolResult[S ~string | ~[]byte](dst []byte, modern bool, text S, structured func([]byte) ([]byte, error), isError bool) ([]byte, error) {
	dst = slices.Grow(dst, len(text)+len(text)/8+2048)
	dst = append(dst, '{')
	if modern {
		dst = append(dst, `"resultType":"complete",`...)
	}
	dst = append(dst, `"content":[{"type":"text","text":`...)
	dst = jsonrpc.AppendString(dst, text)
	dst = append(dst, `}],"structuredContent":`...)
	dst, err := structured(dst)
	if err != nil {
		return dst, err
	}
	dst = append(dst, `,"isError":`...)
	dst = strconv.AppendBool(dst, isError)
	return append(dst, '}'), nil
}

// replicaNote follows "Tool not found" on a read replica, for an unknown
// tool and a hidden one alike (so it reveals no more than before): the
// curator's tools, which change the registry, are the origin's, and so
// are its tokens.
func (s *Server) replicaNote() string {
	if s.replicaOf == "" {
		return ""
	}
	return ". This node is a read replica of " + s.replicaOf + " and cannot change the registry: the curator's tools (upsert_category, remove_category, accept_proposal and the like) are called there, with an admin token of that node; this node serves the change after its next refresh"
}
