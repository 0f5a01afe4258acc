// Command mcpgo serves the four 3gs registry tools through
// github.com/mark3labs/mcp-go, with 3gs's own tool logic and matcher, so the
// load benchmark compares protocol handling and nothing else. It exists for
// benchmarks only; the product never depends on mcp-go.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/three-good-sources/3gs/bench/internal/benchtools"
	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/tools"
)

func main() {
	path := flag.String("registry", "", "registry file; none means the embedded one")
	flag.Parse()
	h := benchtools.Handlers(*path)
	s := server.NewMCPServer("mcpgo-3gs", "bench", server.WithToolCapabilities(false))
	for _, t := range gen.Tools {
		m := benchtools.ManifestOf(t)
		tool := mcp.NewToolWithRawSchema(t.Name, m.Description, m.InputSchema)
		tool.RawOutputSchema = m.OutputSchema
		s.AddTool(tool, handler(h, t.Name))
	}
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// handler adapts one 3gs tool to mcp-go: arguments arrive as a map, so they
// are re-encoded and go through the same strict decoder as in 3gs.
func handler(h *tools.Handlers, name string) server.ToolHandlerFunc {
	tool := gen.LookupTool(name)
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := json.Marshal(req.GetArguments())
		if err != nil {
			return nil, err
		}
		res, err := tool.Call(ctx, h, args)
		var toolErr *gen.ToolError
		switch {
		case errors.As(err, &toolErr):
			r := mcp.NewToolResultStructured(toolErr.Structured, toolErr.Text)
			r.IsError = true
			return r, nil
		case err != nil:
			return nil, err
		}
		return mcp.NewToolResultStructured(json.RawMessage(res.Structured), res.Text), nil
	}
}
