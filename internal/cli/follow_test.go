package cli

import (
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// serve --follow serves the origin's verified registry, and its curator
// tools send edits to the origin.
func TestServeFollowsAnOrigin(t *testing.T) {
	_, regPath, pub, _ := initNode(t, "Ada")
	data, _ := os.ReadFile(regPath)
	sig, _ := os.ReadFile(regPath + ".sig")
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		testkit.ServeRegistry(w, r, data, sig)
	}))
	defer origin.Close()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	_, tok, _ := run(t, nil, "token", "new", "--tokens", tokens, "--tier", "admin", "--name", "root")
	env := map[string]string{"THREEGS_TOKEN": strings.TrimSpace(tok), "THREEGS_TOKENS": tokens, "THREEGS_FOLLOW_CACHE": filepath.Join(dir, "cache")}
	list := `{"jsonrpc":"2.0","id":"list","method":"tools/call","params":{"name":"list_categories","arguments":{}}}`
	remove := `{"jsonrpc":"2.0","id":"rm","method":"tools/call","params":{"name":"remove_category","arguments":{"slug":"example"}}}`
	code, res, errOut := serveLines(t, env, []string{"--follow", origin.URL, "--follow-pubkey", pub}, list, remove)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if r, _ := res["list"]["result"].(map[string]any); r == nil || r["isError"] == true {
		t.Fatalf("list_categories on a replica: %v", res["list"])
	}
	r, _ := res["rm"]["result"].(map[string]any)
	if r == nil || r["isError"] != true || !strings.Contains(r["content"].([]any)[0].(map[string]any)["text"].(string), "read replica: it follows "+origin.URL) {
		t.Errorf("remove on a replica: %v", res["rm"])
	}
	// The wrong key: nothing to serve, and the fix named.
	_, otherPub := mustKey(t)
	code, _, errOut = serveLines(t, map[string]string{"THREEGS_FOLLOW_CACHE": filepath.Join(dir, "other")}, []string{"--follow", origin.URL, "--follow-pubkey", otherPub})
	if code != ExitFail || !strings.Contains(errOut, "no verified copy") || !strings.Contains(errOut, "--follow-pubkey") {
		t.Errorf("another key: exit %d\n%s", code, errOut)
	}
}

func TestFollowFlagRules(t *testing.T) {
	_, pub := mustKey(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--follow", "http://127.0.0.1:1"}, "needs --follow-pubkey"},
		{[]string{"--follow", "http://127.0.0.1:1", "--follow-pubkey", pub, "--registry", "x.json"}, "--registry"},
		{[]string{"--follow", "ftp://example.com", "--follow-pubkey", pub}, "--follow (THREEGS_FOLLOW)"},
		{[]string{"--follow", "http://127.0.0.1:1/mcp", "--follow-pubkey", pub}, "name the node itself: http://127.0.0.1:1"},
		{[]string{"--follow", "http://127.0.0.1:1", "--follow-pubkey", pub, "--follow-refresh", "100ms"}, "at least 1s"},
		{[]string{"--follow-pubkey", pub}, "applies with --follow only"},
		{[]string{"--follow", "http://localhost:8601", "--follow-pubkey", pub}, "only when the URL you give names it as a literal IP"},
		{[]string{"--follow", "http://localhost:8601", "--follow-pubkey", pub}, "\nFix: write the address itself: http://127.0.0.1:8601"},
		{[]string{"--follow", "http://origin.lan:8601", "--follow-pubkey", pub}, "\nFix: write the IP address origin.lan has on your network in its place"},
	} {
		code, _, errOut := serveLines(t, nil, c.args)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %s", c.args, code, errOut)
		}
	}
}

// mustKey is a fresh key pair's secret half and its pk: URI.
func mustKey(t *testing.T) (ed25519.PrivateKey, string) {
	t.Helper()
	k, err := curatorkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k, curatorkey.URI(curatorkey.Public(k))
}

// An admin token of the origin, which a replica does not hold, calling
// upsert_category on the replica hears where edits go, not only that the
// tool is not found; an unknown tool answers the same, so the answer
// reveals nothing more.
func TestReplicaSendsEditsToTheOrigin(t *testing.T) {
	_, regPath, pub, _ := initNode(t, "Ada")
	data, _ := os.ReadFile(regPath)
	sig, _ := os.ReadFile(regPath + ".sig")
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		testkit.ServeRegistry(w, r, data, sig)
	}))
	defer origin.Close()
	dir := t.TempDir()
	originTokens, replicaTokens := filepath.Join(dir, "origin-tokens.json"), filepath.Join(dir, "tokens.json")
	_, tok, _ := run(t, nil, "token", "new", "--tokens", originTokens, "--tier", "admin", "--name", "root")
	run(t, nil, "token", "new", "--tokens", replicaTokens, "--tier", "user", "--name", "reader")
	env := map[string]string{"THREEGS_TOKEN": strings.TrimSpace(tok), "THREEGS_TOKENS": replicaTokens, "THREEGS_FOLLOW_CACHE": filepath.Join(dir, "cache")}
	upsert := `{"jsonrpc":"2.0","id":"up","method":"tools/call","params":{"name":"upsert_category","arguments":{"category":{}}}}`
	unknown := `{"jsonrpc":"2.0","id":"nope","method":"tools/call","params":{"name":"nope","arguments":{}}}`
	code, res, errOut := serveLines(t, env, []string{"--follow", origin.URL, "--follow-pubkey", pub}, upsert, unknown)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for id, name := range map[string]string{"up": "upsert_category", "nope": "nope"} {
		e, _ := res[id]["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if !strings.HasPrefix(msg, "Tool not found: "+name+". This node is a read replica of "+origin.URL) || !strings.Contains(msg, "called there, with an admin token of that node") {
			t.Errorf("%s with the origin's admin token on a replica: %v\nwant the origin named as where edits go", name, res[id])
		}
	}
}
