package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// A real node on loopback refuses a proposed source whose host is not
// public in any of the spellings a resolver or browser reads as one, and
// says which address it read; nothing is recorded. Before, every one of
// them was recorded, for 3gs check to fetch once accepted.
func TestProposedPrivateHostsRefusedInEverySpelling(t *testing.T) {
	bin := testkit.Binary(t)
	reg, key := proposalNode(t, bin, "")
	srv := testkit.Serve(t, bin, "--registry", reg, "--key-file", key, "--proposal-rate", "1000")
	for _, c := range []struct{ host, says string }{
		{"2130706433", "127.0.0.1"}, {"0x7f000001", "127.0.0.1"}, {"0177.0.0.1", "127.0.0.1"}, {"127.1", "127.0.0.1"},
		{"0", "0.0.0.0"}, {"127.0.0.1.", "127.0.0.1"}, {"localhost.", "localhost"}, {"169.254.169.254.", "169.254.169.254"},
		{"100.64.0.1", "carrier-grade NAT"}, {"[64:ff9b::7f00:1]", "NAT64 form of 127.0.0.1"}, {"[2002:7f00:1::]", "6to4 form of 127.0.0.1"},
		{"intranet", "intranet"},
	} {
		p := sqliteProposal()
		p["category"].(map[string]any)["sources"].([]map[string]any)[2]["url"] = "http://" + c.host + "/"
		_, body := testkit.PostMCP(t, srv.URL, "tools/call", map[string]any{"name": gen.ToolProposeChange, "arguments": p})
		var msg struct {
			Error *struct {
				Code int `json:"code"`
				Data struct{ Path, Reason string }
			} `json:"error"`
		}
		if json.Unmarshal(body, &msg) != nil || msg.Error == nil || msg.Error.Code != -32602 ||
			msg.Error.Data.Path != "arguments.category.sources[2].url" || !strings.Contains(msg.Error.Data.Reason, c.says) {
			t.Errorf("a source at http://%s/: %s", c.host, body)
		}
	}
	var list gen.ListProposalsOutput
	callTool(t, srv.URL, gen.ToolListProposals, map[string]any{}, &list)
	if len(list.Proposals) != 0 {
		t.Errorf("%d proposals naming non-public hosts were recorded", len(list.Proposals))
	}
}
