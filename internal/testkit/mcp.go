package testkit

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"testing"
	"time"
)

// Stateless is the protocol version whose requests carry everything in
// _meta and headers, with no session: the one the request helpers speak.
const Stateless = "2026-07-28"

// StatelessRequest is a 2026-07-28 JSON-RPC request for method with
// params (nil for none): the body, with the version, capabilities and
// client in _meta, and the headers the transport requires, the tool's
// name among them for tools/call.
func StatelessRequest(id int, method string, params map[string]any) (body []byte, header map[string]string) {
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    Stateless,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "3gs-test", "version": "1"},
	}}
	maps.Copy(p, params)
	body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p})
	header = map[string]string{"MCP-Protocol-Version": Stateless, "Mcp-Method": method}
	if name, ok := params["name"].(string); ok {
		header["Mcp-Name"] = name
	}
	return body, header
}

// PostMCP sends a StatelessRequest to the /mcp endpoint mcpURL, with the
// extra headers given as name, value pairs, and returns the status and
// the whole body. A transport failure fails the test.
func PostMCP(t testing.TB, mcpURL, method string, params map[string]any, header ...string) (int, []byte) {
	t.Helper()
	body, h := StatelessRequest(1, method, params)
	req, err := http.NewRequest(http.MethodPost, mcpURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, data := Do(t, &http.Client{Timeout: 30 * time.Second}, req)
	return resp.StatusCode, data
}

// Do sends req with c and returns the response, its body closed, and the
// whole body. A transport or read failure fails the test.
func Do(t testing.TB, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", req.Method, req.URL, err)
	}
	return resp, data
}

// ToolAnswer is a tools/call result, error results included.
type ToolAnswer struct {
	IsError    bool
	Text       string // the first content block's
	Structured json.RawMessage
}

// CallTool calls tool with args over the stateless transport and returns
// its result, error or not; an answer that is no result fails the test.
func CallTool(t testing.TB, mcpURL, tool string, args any) ToolAnswer {
	t.Helper()
	status, data := PostMCP(t, mcpURL, "tools/call", map[string]any{"name": tool, "arguments": args})
	var msg struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil || msg.Error != nil || len(msg.Result.Content) == 0 {
		t.Fatalf("%s: HTTP %d: %s", tool, status, data)
	}
	return ToolAnswer{IsError: msg.Result.IsError, Text: msg.Result.Content[0].Text, Structured: msg.Result.StructuredContent}
}

// ServeRegistry answers as a 3gs node does for its signed registry: reg
// at /registry (as JSON), sig at /registry.sig, and 404 for anything
// else. Tests that stand in for an origin or a peer call it from their
// handlers.
func ServeRegistry(w http.ResponseWriter, r *http.Request, reg, sig []byte) {
	switch r.URL.Path {
	case "/registry":
		w.Header().Set("Content-Type", "application/json")
		w.Write(reg)
	case "/registry.sig":
		w.Write(sig)
	default:
		http.NotFound(w, r)
	}
}
