package httpserver

// The Streamable HTTP headers a request must agree with its body on.

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"github.com/three-good-sources/3gs/internal/mcp"
)

// checkHeaders compares the headers a 2026-07-28 request must carry with
// its body, and says what is wrong, if anything.
func checkHeaders(r *http.Request, req *mcp.Request, version string) string {
	v, ok := oneHeader(r, headerProtocolVersion)
	if !ok {
		return "the MCP-Protocol-Version header is required (once) and must equal params._meta's protocol version " + quoteHeader(version)
	}
	if v != version {
		return "MCP-Protocol-Version header " + quoteHeader(v) + " does not match params._meta's protocol version " + quoteHeader(version)
	}
	method, ok := oneHeader(r, headerMethod)
	if !ok {
		return "the Mcp-Method header is required (once) and must equal the body's method " + quoteHeader(req.Msg.Method)
	}
	if method != req.Msg.Method {
		return "Mcp-Method header " + quoteHeader(method) + " does not match the body's method " + quoteHeader(req.Msg.Method)
	}
	if req.Msg.Method != "tools/call" {
		return ""
	}
	raw, ok := oneHeader(r, headerName)
	if !ok {
		return "the Mcp-Name header is required (once) on tools/call and must equal params.name"
	}
	name, err := decodeHeaderValue(raw)
	if err != nil {
		return "Mcp-Name header " + quoteHeader(raw) + ": " + err.Error()
	}
	if body, ok := req.ToolName(); ok && body != name {
		return "Mcp-Name header " + quoteHeader(name) + " does not match params.name " + quoteHeader(body)
	}
	return ""
}

// oneHeader returns a header sent exactly once.
func oneHeader(r *http.Request, key string) (string, bool) {
	v := r.Header[key]
	if len(v) != 1 {
		return "", false
	}
	return v[0], true
}

// decodeHeaderValue undoes the transport's =?base64?...?= wrapping of
// values that are not plain ASCII.
func decodeHeaderValue(v string) (string, error) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, nil
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return "", errors.New("starts like a =?base64?...?= value but does not end with ?=")
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", errors.New("its =?base64?...?= value is not valid base64")
	}
	return string(b), nil
}
