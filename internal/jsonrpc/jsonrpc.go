// Package jsonrpc reads JSON-RPC 2.0 envelopes and writes responses, for
// one message per call. It knows nothing of MCP methods.
//
// Keys are matched exactly: sonic, like encoding/json, matches struct fields
// case-insensitively unless told otherwise, and a "Method" accepted as
// "method" is how case-insensitive decoders get fooled.
package jsonrpc

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/encoder"
)

// Error codes of JSON-RPC 2.0 and of MCP.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeNotInitialized is the legacy-era answer to a request sent before
	// initialize (MCP reserves -32000..-32019 for such server errors).
	CodeNotInitialized = -32002
	// CodeUnsupportedProtocolVersion is MCP 2026-07-28's answer to a
	// request for a version the server does not speak.
	CodeUnsupportedProtocolVersion = -32022
	// CodeHeaderMismatch is MCP 2026-07-28's answer, over HTTP, to headers
	// that are missing or disagree with the body they mirror.
	CodeHeaderMismatch = -32020
	// CodeAuthRequired and CodeForbidden refuse a tool the caller may see
	// but not run: without a valid token, or with one of too low a tier.
	// They sit outside the JSON-RPC reserved range (-32768..-32000).
	CodeAuthRequired = -31001
	CodeForbidden    = -31003
)

// Kind says what a message is.
type Kind uint8

const (
	KindRequest      Kind = iota // has an id and a method: answer it
	KindNotification             // has a method and no id: never answer
	KindResponse                 // has an id and a result or error: a client's reply, ignored
)

// Message is one decoded envelope. ID and Params alias the input line.
type Message struct {
	Kind   Kind
	ID     []byte // the id exactly as sent (a JSON string or number); nil for notifications
	Method string
	Params []byte // raw params, nil when absent
}

// Error is a JSON-RPC error object. Data, when not nil, is encoded as JSON.
type Error struct {
	Code    int
	Message string
	Data    any
}

func (e *Error) Error() string { return e.Message }

var api = sonic.Config{CaseSensitive: true}.Froze()

// Unmarshal decodes JSON into v matching object keys exactly. Every
// protocol-level decode goes through it: sonic's default, like
// encoding/json, would accept "RequestId" for "requestId".
func Unmarshal(data []byte, v any) error { return api.Unmarshal(data, v) }

var nullID = []byte("null")

// envelope is a message's members, raw.
type envelope struct{ JSONRPC, ID, Method, Params, Result, Error []byte }

// knownMethods are the methods clients send most; Parse returns these
// strings rather than a copy of the text.
var knownMethods = []string{"tools/call", "tools/list", "initialize", "notifications/initialized", "ping", "server/discover", "notifications/cancelled"}

// envelopeKeys are the members Parse reads; a key that differs from one of
// them only by case is refused, since a lenient decoder elsewhere (a proxy,
// a log reader) would take it for the real one.
var envelopeKeys = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// MaxIDBytes bounds a request id as sent, quotes included. Every answer
// echoes the id, so without a bound a client could make the server hold
// and write back megabytes per request. UUIDs and counters fit many times
// over.
const MaxIDBytes = 256

// Parse decodes one message. When the message is invalid it returns the
// error to send and the id to send it with: the request's id when it could
// be read, else null.
func Parse(line []byte) (*Message, []byte, *Error) {
	if !utf8.Valid(line) {
		return nil, nullID, &Error{Code: CodeParseError, Message: "Parse error: message is not valid UTF-8"}
	}
	sh := inspect(line, MaxDepth, envelopeKeys)
	switch {
	case sh.ctrl >= 0:
		return nil, nullID, &Error{Code: CodeParseError, Message: "Parse error: control character U+" + fmt.Sprintf("%04X", line[sh.ctrl]) +
			" in a string at byte " + strconv.Itoa(sh.ctrl) + "; JSON strings must escape it"}
	case sh.escape >= 0:
		return nil, nullID, &Error{Code: CodeParseError, Message: "Parse error: invalid escape in a string at byte " + strconv.Itoa(sh.escape)}
	case sh.deep >= 0:
		return nil, nullID, &Error{Code: CodeParseError, Message: "Parse error: nesting deeper than " + strconv.Itoa(MaxDepth) + " levels at byte " + strconv.Itoa(sh.deep)}
	}
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if ok, pos := encoder.Valid(trimmed); !ok {
		return nil, nullID, &Error{Code: CodeParseError, Message: "Parse error: invalid JSON at byte " + strconv.Itoa(pos+len(line)-len(trimmed))}
	}
	switch trimmed[0] {
	case '[':
		return nil, nullID, &Error{Code: CodeInvalidRequest, Message: "Batch requests not supported"}
	case '{':
	default:
		return nil, nullID, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: a message must be a JSON object"}
	}
	// Every member stays raw and Parse judges each itself, so that a wrong
	// type yields the right code rather than a decoder message.
	var members [6][]byte // in envelopeKeys order
	if !Members(trimmed, envelopeKeys, members[:]) {
		return nil, nullID, &Error{Code: CodeInvalidRequest, Message: "Invalid Request"}
	}
	env := envelope{JSONRPC: members[0], ID: members[1], Method: members[2], Params: members[3], Result: members[4], Error: members[5]}
	m := &Message{Params: env.Params}
	id := nullID
	if env.ID != nil {
		switch c := env.ID[0]; {
		case len(env.ID) > MaxIDBytes:
			return nil, nullID, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id is " + strconv.Itoa(len(env.ID)) + " bytes long; at most " + strconv.Itoa(MaxIDBytes) + " are accepted"}
		case c == '"' || c == '-' || ('0' <= c && c <= '9'):
			m.ID, id = env.ID, env.ID
		default:
			return nil, nullID, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id must be a string or a number"}
		}
	}
	if sh.dupAt >= 0 {
		if sh.dup == "id" {
			id = nullID
		}
		return nil, id, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: member " + strconv.Quote(Brief(sh.dup)) + " appears twice"}
	}
	if sh.variantAt >= 0 {
		return nil, id, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: member " + strconv.Quote(Brief(sh.variant)) + " " + variantReason(sh.variantOf)}
	}

	if string(env.JSONRPC) != `"2.0"` {
		return nil, id, &Error{Code: CodeInvalidRequest, Message: `Invalid Request: jsonrpc must be exactly "2.0"`}
	}
	if env.Method == nil {
		if m.ID != nil && (env.Result != nil || env.Error != nil) {
			m.Kind = KindResponse
			return m, id, nil
		}
		return nil, id, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method is missing"}
	}
	if env.Method[0] != '"' {
		return nil, id, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method must be a non-empty string"}
	}
	if method, ok := String(env.Method, knownMethods...); ok {
		m.Method = method
	}
	if m.Method == "" {
		return nil, id, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method must be a non-empty string"}
	}
	if env.Params != nil && env.Params[0] != '{' && string(env.Params) != "null" {
		return nil, id, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: params must be an object"}
	}
	if string(env.Params) == "null" {
		m.Params = nil
	}
	if m.ID == nil {
		m.Kind = KindNotification
	}
	return m, id, nil
}

// AppendResultStart appends the opening of a response for id, up to where
// the result goes; the caller appends the result and then '}'. Building
// the result in place saves copying it.
func AppendResultStart(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	return append(dst, `,"result":`...)
}

// AppendError appends an error response for id.
func AppendError(dst, id []byte, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, e.Message)
	if e.Data != nil {
		data, err := sonic.Marshal(e.Data)
		if err == nil {
			dst = append(dst, `,"data":`...)
			dst = append(dst, data...)
		}
	}
	return append(dst, "}}"...)
}

func appendString(dst []byte, s string) []byte { return AppendString(dst, s) }

// AppendFloat appends f as sonic's default encoder writes a float64, which
// is as encoding/json does: the shortest decimal that reads back as f,
// in exponent form below 1e-6 and from 1e21 (with a one-digit negative
// exponent written without its leading zero). NaN and the infinities
// have no JSON form; the caller must refuse them.
func AppendFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-07 is written e-7.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// AppendString appends s, a string or the bytes of one, as a JSON string, byte for byte as sonic's
// default encoder writes it (quote, backslash, \t \n \r, other control
// characters as \u00XX, everything else as is). Long text is scanned
// eight bytes at a time for a byte that needs escaping; it used to go
// through sonic's encoder, whose JIT then compiled a program for strings
// at the first answer: code, memory and a compiler the server otherwise
// need not touch.
func AppendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	if len(s) < 64 {
		return appendShortString(dst, s)
	}
	return appendLongString(dst, s)
}

// appendLongString is appendShortString reading eight bytes at a time:
// a word with no byte to escape is skipped whole, and in one that has,
// the first such byte is found from the word's mask.
func appendLongString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = slices.Grow(dst, len(s)+2)
	dst = append(dst, '"')
	start, i := 0, 0
	for i+8 <= len(s) {
		m := escapes8(load8(s, i))
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) / 8
		dst = append(dst, s[start:i]...)
		dst = appendEscape(dst, s[i])
		i++
		start = i
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			dst = append(dst, s[start:i]...)
			dst = appendEscape(dst, c)
			start = i + 1
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// load8 is the eight bytes of s from i, little-endian. The compiler
// combines the eight byte loads into one where the architecture allows
// (a MOVQ on amd64), as an unsafe view of the string did.
func load8[S ~string | ~[]byte](s S, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// escapes8 marks, with its high bit, each of the eight bytes in x that
// is below 0x20, a quote or a backslash (the classic "has a byte less
// than n" and "has a zero byte" tests). A borrow can mark a byte above a
// marked one wrongly, never one below, so the lowest mark is exact; bytes
// from 0x80 are never marked.
func escapes8(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	less := (x - ones*0x20) &^ x
	q := x ^ (ones * '"')
	bs := x ^ (ones * '\\')
	return (less | (q-ones)&^q | (bs-ones)&^bs) & highs
}

func appendShortString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscape(dst, c)
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscape appends the escape of c, a control character, quote or
// backslash.
func appendEscape(dst []byte, c byte) []byte {
	const hex = "0123456789abcdef"
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\t':
		return append(dst, '\\', 't')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	}
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}

// Brief shortens client-supplied text (a method, a tool name, a key) to
// 64 characters for quoting in an error message, so a huge name cannot make
// a huge answer.
func Brief(s string) string {
	const limit = 64
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit]) + "…"
}
