package mcp_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/testserver"
)

// The size of what an anonymous agent is handed (issue 48, "Small
// definitions"): every host puts tools/list into the model's context on
// every conversation. The whole tools/list answer of a plain serve stays
// within 12 KB, and its names, descriptions and input schemas, what the
// model reads to call a tool, within 5 KB; with peers and proposals on,
// the whole answer stays within 24 KB. Measured on the answer an
// anonymous stdio session gets, as `3gs serve` writes it.
func TestToolsListSize(t *testing.T) {
	const plainMax, plainCallMax, fullMax = 12_000, 5_000, 24_000
	for _, c := range []struct {
		name         string
		cfg          mcp.Config
		max, callMax int
	}{
		{"plain", mcp.Config{}, plainMax, plainCallMax},
		{"peers", mcp.Config{Federated: true}, fullMax, 0},
		{"proposals", mcp.Config{Proposals: true}, fullMax, 0},
		{"peers and proposals", mcp.Config{Federated: true, Proposals: true}, fullMax, 0},
	} {
		srv := testserver.New(t, testserver.Options{Stub: true, Federated: c.cfg.Federated, Proposals: c.cfg.Proposals}).Server
		sess := srv.NewSession()
		exchange(sess, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		exchange(sess, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		answer := exchange(sess, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		var res struct {
			Result struct {
				Tools []struct {
					Name        string          `json:"name"`
					Description string          `json:"description"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal(answer, &res); err != nil || len(res.Result.Tools) == 0 {
			t.Fatalf("%s: tools/list answered %.200s (%v)", c.name, answer, err)
		}
		call := 0
		for _, tool := range res.Result.Tools {
			var in bytes.Buffer
			if err := json.Compact(&in, tool.InputSchema); err != nil {
				t.Fatal(err)
			}
			call += len(tool.Name) + len(tool.Description) + in.Len()
		}
		t.Logf("%s: %d tools, tools/list %d bytes, names + descriptions + input schemas %d bytes", c.name, len(res.Result.Tools), len(answer), call)
		if len(answer) > c.max {
			t.Errorf("%s: tools/list is %d bytes, over %d", c.name, len(answer), c.max)
		}
		if c.callMax > 0 && call > c.callMax {
			t.Errorf("%s: names, descriptions and input schemas take %d bytes, over %d", c.name, call, c.callMax)
		}
	}
}
