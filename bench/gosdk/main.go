// Command gosdk serves the public 3gs registry tools over Streamable HTTP
// through the official Go SDK, github.com/modelcontextprotocol/go-sdk,
// with 3gs's own tool logic, strict decoders and matcher, so the HTTP
// benchmark (../httpload) compares protocol and transport handling and
// nothing else. It exists for benchmarks only; 3gs never depends on the SDK.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/three-good-sources/3gs/bench/internal/benchtools"
	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/tools"
)

func main() {
	path := flag.String("registry", "", "registry file; none means the embedded one")
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on; the address taken is printed on stdout")
	stateless := flag.Bool("stateless", false, "serve statelessly (StreamableHTTPOptions.Stateless), which the 2026-07-28 era needs")
	flag.Parse()
	h := benchtools.Handlers(*path)
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-3gs", Version: "bench"}, nil)
	for _, t := range gen.Tools {
		if t.Tier != gen.TierPublic {
			continue
		}
		m := benchtools.ManifestOf(t)
		s.AddTool(&mcp.Tool{Name: t.Name, Description: m.Description, InputSchema: m.InputSchema, OutputSchema: m.OutputSchema}, handler(h, t.Name))
	}
	// JSON responses rather than SSE streams, as 3gs answers, so both
	// servers do the same work per request.
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true, Stateless: *stateless})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.WriteString("http://" + ln.Addr().String() + "/mcp\n")
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	log.Fatal(http.Serve(ln, mux))
}

// handler adapts one 3gs tool: the raw arguments go through the same strict
// decoder as in 3gs.
func handler(h *tools.Handlers, name string) mcp.ToolHandler {
	tool := gen.LookupTool(name)
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := tool.Call(ctx, h, req.Params.Arguments)
		var toolErr *gen.ToolError
		switch {
		case errors.As(err, &toolErr):
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: toolErr.Text}}, StructuredContent: toolErr.Structured, IsError: true}, nil
		case err != nil:
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Text}}, StructuredContent: json.RawMessage(res.Structured)}, nil
	}
}
