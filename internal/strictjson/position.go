package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// WithPosition is err with each syntax error's byte offset in data told as
// a line and column, and the text there: "syntax error at line 31,
// column 7 (byte 786), near "\"rank\": 1,,"". It is for files a person
// edits (a registry, a tokens file, a cache), where a byte offset sends
// them counting; tool arguments keep the offset alone, since the text is
// the caller's own. Other errors are returned as they are.
func WithPosition(err error, data []byte) error {
	var es Errors
	if errors.As(err, &es) {
		out := make(Errors, len(es))
		for i, e := range es {
			out[i] = positioned(e, data)
		}
		return out
	}
	var e *Error
	if errors.As(err, &e) {
		return positioned(e, data)
	}
	return err
}

func positioned(e *Error, data []byte) *Error {
	if e.Offset <= 0 || e.Offset > len(data)+1 {
		return e
	}
	at := e.Offset - 1
	line := 1 + bytes.Count(data[:at], []byte("\n"))
	start := bytes.LastIndexByte(data[:at], '\n') + 1
	column := 1 + utf8.RuneCount(data[start:at])
	reason := e.Reason
	byteAt := "at byte " + strconv.Itoa(at)
	where := fmt.Sprintf("at line %d, column %d (byte %d), near %s", line, column, at, snippet(data, start, at))
	if i := bytes.LastIndex([]byte(reason), []byte(byteAt)); i >= 0 {
		reason = reason[:i] + where + reason[i+len(byteAt):]
	} else {
		reason += " " + where
	}
	return &Error{Path: e.Path, Reason: reason, Offset: e.Offset}
}

// snippet is the text of the line around at (up to 24 bytes either side),
// quoted, so that a control character or broken UTF-8 is visible.
func snippet(data []byte, lineStart, at int) string {
	from := max(lineStart, at-24)
	to := at + 24
	if end := bytes.IndexByte(data[at:], '\n'); end >= 0 {
		to = min(to, at+end)
	}
	to = min(to, len(data))
	for from > lineStart && !utf8.RuneStart(data[from]) {
		from--
	}
	for to < len(data) && !utf8.RuneStart(data[to]) {
		to++
	}
	return strconv.Quote(string(bytes.TrimLeft(data[from:to], " \t")))
}
