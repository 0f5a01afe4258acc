package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/three-good-sources/3gs/internal/testkit"
)

func TestCanonicalNodeURL(t *testing.T) {
	same := [][]string{
		{"https://node.example", "HTTPS://Node.Example:443/", "https://node.example./mcp", "https://node.example/mcp/?x=1#y"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/mcp"},
		{"http://[::1]:80", "http://[0:0::1]/"},
		{"https://node.example/base", "https://node.example/base/mcp"},
	}
	different := []string{"https://node.example", "http://node.example", "https://node.example:8443", "https://other.example", "https://node.example/base", "http://127.0.0.1:8081"}
	canon := func(s string) string {
		c, err := canonicalNodeURL(s)
		if err != nil {
			t.Fatalf("canonicalNodeURL(%q): %v", s, err)
		}
		return c
	}
	for _, group := range same {
		for _, u := range group[1:] {
			if canon(u) != canon(group[0]) {
				t.Errorf("%q is %s, %q is %s: want one node", u, canon(u), group[0], canon(group[0]))
			}
		}
	}
	seen := map[string]string{}
	for _, u := range different {
		if prev, ok := seen[canon(u)]; ok {
			t.Errorf("%q and %q are both %s: want two nodes", prev, u, canon(u))
		}
		seen[canon(u)] = u
	}
	if _, err := canonicalNodeURL("ftp://node.example"); err == nil {
		t.Error("an ftp URL was taken for a node")
	}
}

// stubNode is a node that answers get_proposal naming the curator key
// nodeKey, and records the tools called.
func stubNode(t *testing.T, nodeKey string) (url string, tools func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Mcp-Name"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
			"content":           []map[string]any{{"type": "text", "text": "Proposal p0f3a9c2e41b7d586"}},
			"structuredContent": map[string]any{"id": "p0f3a9c2e41b7d586", "node_pubkey": nodeKey},
		}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// With no key to expect, the vote is refused before the node is asked.
func TestVoteRefusesWithoutAnExpectedNodeKey(t *testing.T) {
	_, keyPath, _, _ := curatorSetup(t)
	node, tools := stubNode(t, peerKey(t))
	code, _, errOut := run(t, nil, "proposals", "vote", "p0f3a9c2e41b7d586", "support", "--key-file", keyPath, "--node", node)
	if code != ExitUsage || !strings.Contains(errOut, "--registry YOUR_REGISTRY") || !strings.Contains(errOut, "--node-pubkey KEY") {
		t.Errorf("exit %d\n%s\nwant a refusal asking for --registry or --node-pubkey", code, errOut)
	}
	if len(tools()) != 0 {
		t.Errorf("the node was asked %v", tools())
	}
}

// A node answering with a key other than the one expected, from
// --node-pubkey or from the voter's endorsement of its URL however
// spelled, gets no vote: the refusal names both keys.
func TestVoteRefusesANodeAnsweringWithAnotherKey(t *testing.T) {
	_, keyPath, _, regPath := curatorSetup(t)
	answered, expected := peerKey(t), peerKey(t)
	node, tools := stubNode(t, answered)
	if code, _, errOut := run(t, nil, "endorse", regPath, "--pubkey", expected, "--url", node+"/", "--key-file", keyPath); code != ExitOK {
		t.Fatalf("endorse: exit %d\n%s", code, errOut)
	}
	for name, env := range map[string]map[string]string{
		"--node-pubkey": {"THREEGS_VOTE_NODE_PUBKEY": expected},
		"--registry":    {"REGISTRY_PATH": regPath},
	} {
		code, _, errOut := run(t, env, "proposals", "vote", "p0f3a9c2e41b7d586", "oppose", "--key-file", keyPath, "--node", node+"/mcp")
		if code != ExitFail || !strings.Contains(errOut, "nothing signed") || !strings.Contains(errOut, "answers with curator key "+answered) || !strings.Contains(errOut, expected) {
			t.Errorf("%s: exit %d\n%s\nwant a refusal naming %s and %s", name, code, errOut, answered, expected)
		}
	}
	for _, tool := range tools() {
		if tool != "get_proposal" {
			t.Errorf("the node was called with %s", tool)
		}
	}
}

// --node follows the rule --follow does (fetch.CheckOperatorURL): a name
// only a local network resolves is refused before the node is asked, with
// the address to write; the literal address itself is taken.
func TestVoteNodeFollowsTheFollowRule(t *testing.T) {
	_, keyPath, _, _ := curatorSetup(t)
	node, tools := stubNode(t, peerKey(t))
	local := strings.Replace(node, "127.0.0.1", "localhost", 1)
	code, _, errOut := run(t, nil, "proposals", "vote", "p0f3a9c2e41b7d586", "support", "--key-file", keyPath, "--node", local, "--node-pubkey", peerKey(t))
	if code != ExitUsage || !strings.Contains(errOut, "literal IP") || !strings.Contains(errOut, "\nFix: write the address itself: "+node) {
		t.Errorf("--node %s: exit %d\n%s\nwant a refusal naming the literal-IP rule and %s", local, code, errOut, node)
	}
	if len(tools()) != 0 {
		t.Errorf("the node was asked %v", tools())
	}
	want := peerKey(t)
	code, _, errOut = run(t, nil, "proposals", "vote", "p0f3a9c2e41b7d586", "support", "--key-file", keyPath, "--node", node, "--node-pubkey", want)
	if strings.Contains(errOut, "literal IP") || len(tools()) == 0 {
		t.Errorf("--node %s (a literal address): exit %d\n%s\nwant the node asked", node, code, errOut)
	}
}

// proposals vote calls the node through the one guarded client
// (internal/fetch), not a plain http.Client: a public-looking name whose
// address is a loopback one is refused when dialling, before a byte goes
// to the node, though --node passed fetch.CheckOperatorURL; the node's
// literal address, the operator's, is called; and an answer over
// maxAnswer is refused, not read. Before, the plain client connected to
// whatever the name resolved to.
func TestVoteCallsThroughTheGuardedClient(t *testing.T) {
	_, keyPath, _, _ := curatorSetup(t)
	node, tools := stubNode(t, peerKey(t))
	u, err := url.Parse(node)
	if err != nil {
		t.Fatal(err)
	}
	// node.example.net resolves, through this resolver only, to the stub
	// on 127.0.0.1.
	nodeResolver = testkit.DNSA(t, net.ParseIP("127.0.0.1"))
	t.Cleanup(func() { nodeResolver = nil })
	named := "http://node.example.net:" + u.Port()
	code, _, errOut := run(t, nil, "proposals", "vote", "p0f3a9c2e41b7d586", "support", "--key-file", keyPath, "--node", named, "--node-pubkey", peerKey(t))
	if code != ExitFail || !strings.Contains(errOut, "node.example.net resolves to 127.0.0.1") || !strings.Contains(errOut, "not a public address") {
		t.Errorf("--node %s: exit %d\n%s\nwant the dial refused by the address policy", named, code, errOut)
	}
	if len(tools()) != 0 {
		t.Errorf("the node was asked %v through a name resolving to loopback", tools())
	}

	// The answer is bounded: a node that sends more than maxAnswer is
	// refused, whatever it says.
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`))
		w.Write(bytes.Repeat([]byte("a"), maxAnswer))
		w.Write([]byte(`"}]}}`))
	}))
	t.Cleanup(big.Close)
	code, _, errOut = run(t, nil, "proposals", "vote", "p0f3a9c2e41b7d586", "support", "--key-file", keyPath, "--node", big.URL, "--node-pubkey", peerKey(t))
	if code != ExitFail || !strings.Contains(errOut, "over the 1048576-byte limit") {
		t.Errorf("a node answering over %d bytes: exit %d\n%s", maxAnswer, code, errOut)
	}
}
