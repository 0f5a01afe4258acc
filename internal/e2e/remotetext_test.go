package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// hostileText is what a hostile node writes to a curator's terminal: clear
// the screen, set the window's title, colour, and reverse the text.
const hostileText = "Recorded \x1b[2J\x1b]0;owned\x07\x1b[31mred\x1b[0m \u202eevil\u2066 \U000E0041"

// hostileNode is a node on loopback whose every answer carries
// hostileText: get_proposal (naming the curator key nodeKey),
// vote_proposal, a failing call (JSON-RPC error), and /health.
func hostileNode(t *testing.T, nodeKey string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var answer map[string]any
		switch {
		case r.URL.Path == "/health":
			answer = map[string]any{"status": "ok", "version": hostileText, "registry": map[string]any{"version": hostileText, "categories": 1}}
		case r.Header.Get("Mcp-Name") == "get_proposal" && strings.Contains(r.URL.RawQuery, "fail"):
			answer = map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": -32602, "message": hostileText}}
		default:
			answer = map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
				"content":           []map[string]any{{"type": "text", "text": hostileText + "\nsecond line\r overwritten"}},
				"structuredContent": map[string]any{"id": "p0f3a9c2e41b7d586", "node_pubkey": nodeKey, "recorded": true},
			}}
		}
		json.NewEncoder(w).Encode(answer)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Text a node writes reaches the curator's terminal with its control and
// format characters shown as escapes: 3gs proposals vote's answer and a
// refusal's message, and 3gs health's line. The real CLI against a
// hostile node on loopback.
func TestRemoteTextReachesTheTerminalEscaped(t *testing.T) {
	bin := testkit.Binary(t)
	key, err := curatorkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	nodeKey := curatorkey.URI(curatorkey.Public(key))
	node := hostileNode(t, nodeKey)
	voterKey := t.TempDir() + "/voter.key"
	runOK(t, bin, "keygen", "--out", voterKey)

	for name, args := range map[string][]string{
		"vote":         {"proposals", "vote", "p0f3a9c2e41b7d586", "support", "--key-file", voterKey, "--node", node},
		"vote refused": {"proposals", "vote", "p0f3a9c2e41b7d586", "support", "--key-file", voterKey, "--node", node + "/mcp?fail"},
		"health":       {"health", "--url", node + "/health"},
	} {
		cmd := exec.Command(bin, args...)
		// The expected key through its environment twin.
		cmd.Env = append(os.Environ(), "THREEGS_VOTE_NODE_PUBKEY="+nodeKey)
		out, _ := cmd.CombinedOutput()
		if i := strings.IndexAny(string(out), "\x1b\x07\r\u202e\u2066\U000E0041"); i >= 0 {
			t.Errorf("%s: a control or format character reached the terminal at byte %d:\n%q", name, i, out)
		}
		if !strings.Contains(string(out), `\x1b[2J\x1b]0;owned\x07\x1b[31mred\x1b[0m \u202eevil\u2066 \U000e0041`) {
			t.Errorf("%s: the node's text is not shown with its escapes visible:\n%q", name, out)
		}
	}
}
