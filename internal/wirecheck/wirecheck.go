// Package wirecheck judges JSON-RPC lines with encoding/json alone, so
// that fuzz targets of the transports can check the server's parser and
// writer against something that shares no code with them.
package wirecheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxDepth is the nesting the server accepts (jsonrpc.MaxDepth), restated
// here so this package imports nothing of the server's.
const MaxDepth = 64

// Kind is what a client line is, judged strictly.
type Kind int

const (
	// Unclean lines may be refused, with their id when it can be read
	// or with a null id.
	Unclean Kind = iota
	// CleanRequest must be answered exactly once under its id.
	CleanRequest
	// CleanNotification and CleanResponse must get no answer.
	CleanNotification
	CleanResponse
)

// Classify judges one line. id is the raw id when the line has one that is
// a string or number; cancel is the raw requestId of a clean
// notifications/cancelled.
func Classify(line []byte) (kind Kind, id, cancel string) {
	var env map[string]json.RawMessage
	if !utf8.Valid(line) || !json.Valid(line) || json.Unmarshal(line, &env) != nil || env == nil {
		return Unclean, "", ""
	}
	if raw, ok := env["id"]; ok && len(raw) > 0 && (raw[0] == '"' || raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		id = string(raw)
	}
	if depth, repeats := walk(line); depth > MaxDepth || repeats || string(env["jsonrpc"]) != `"2.0"` {
		return Unclean, id, ""
	}
	if _, hasID := env["id"]; hasID && id == "" {
		return Unclean, "", ""
	}
	rawMethod, hasMethod := env["method"]
	var method string
	if hasMethod && (json.Unmarshal(rawMethod, &method) != nil || method == "") {
		return Unclean, id, ""
	}
	if p, ok := env["params"]; ok && string(p) != "null" && (len(p) == 0 || p[0] != '{') {
		return Unclean, id, ""
	}
	switch {
	case hasMethod && id != "":
		return CleanRequest, id, ""
	case hasMethod:
		if method == "notifications/cancelled" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(env["params"], &p) == nil && p.RequestID != nil {
				cancel = string(p.RequestID)
			}
		}
		return CleanNotification, "", cancel
	case id != "" && (env["result"] != nil || env["error"] != nil):
		return CleanResponse, id, ""
	}
	return Unclean, id, ""
}

// walk reports how deeply a valid JSON text nests and whether its
// top-level object has a key twice.
func walk(line []byte) (depth int, repeats bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	seen := map[string]bool{}
	d, wantKey := 0, false
	for {
		tok, err := dec.Token()
		if err != nil {
			return depth, repeats
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			d++
			depth = max(depth, d)
			wantKey = d == 1 && tok == json.Delim('{')
			continue
		case json.Delim('}'), json.Delim(']'):
			d--
		}
		switch {
		case d == 1 && wantKey:
			k := tok.(string)
			repeats = repeats || seen[k]
			seen[k] = true
			wantKey = false
		case d == 1:
			wantKey = true // a value ended; a key comes next
		}
	}
}

// CheckResponse returns an error unless line is one well-formed JSON-RPC
// response, and otherwise its id's text.
func CheckResponse(line []byte) (string, error) {
	if !utf8.Valid(line) || !json.Valid(line) {
		return "", fmt.Errorf("not a JSON line: %q", line)
	}
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    *int    `json:"code"`
			Message *string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&r); err != nil {
		return "", fmt.Errorf("%q: %v", line, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", fmt.Errorf("more than one value on a line: %q", line)
	}
	if r.JSONRPC != "2.0" || r.ID == nil || (r.Result == nil) == (r.Error == nil) {
		return "", fmt.Errorf("not a JSON-RPC response: %q", line)
	}
	if r.Error != nil && (r.Error.Code == nil || r.Error.Message == nil || *r.Error.Message == "") {
		return "", fmt.Errorf("an error without a code or message: %q", line)
	}
	if strings.ContainsRune(string(line), '\n') {
		return "", fmt.Errorf("a response spans lines: %q", line)
	}
	return string(r.ID), nil
}
