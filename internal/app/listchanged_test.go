package app

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
)

// reloadEndorsing writes a registry of n categories endorsing endorsed
// curators to the server's file and reloads it.
func reloadEndorsing(t *testing.T, srv *Server, cfg *Config, n, endorsed int) {
	t.Helper()
	doc := registrytest.Generate(n, 3)
	for range endorsed {
		pub, _, err := ed25519.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		// A loopback address nothing answers at: the registry is
		// unsigned, so its endorsements are listed but never fetched.
		doc.Endorsements = append(doc.Endorsements, gen.Endorsement{Pubkey: curatorkey.URI(pub), URL: "http://127.0.0.1:9", Since: "2026-01-15"})
	}
	if err := os.WriteFile(cfg.Registry, gen.EncodeRegistry(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Tools.ReloadRegistry(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := len(srv.Tools.Published().Registry.Endorsements()); got != endorsed {
		t.Fatalf("reloaded %d endorsements, want %d", got, endorsed)
	}
}

// listedNames are the tool names of a tools/list response.
func listedNames(t *testing.T, resp map[string]any) []string {
	t.Helper()
	var names []string
	for _, tool := range resp["result"].(map[string]any)["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	return names
}

// A stdio session declares tools.listChanged, and is sent
// notifications/tools/list_changed after a reload that gives the node its
// first peer; its next tools/list shows get_federated_sources.
func TestStdioSessionToldWhenAReloadAddsAPeer(t *testing.T) {
	srv, cfg := startCatalog(t, 40, 150)
	c := newStdioClient(t, srv.MCP)
	init, _ := c.request("initialize", initParams)
	if caps := init["result"].(map[string]any)["capabilities"].(map[string]any)["tools"].(map[string]any); caps["listChanged"] != true {
		t.Errorf("a stdio session's capabilities: %v", caps)
	}
	list, _ := c.request("tools/list", `{}`)
	if slices.Contains(listedNames(t, list), gen.ToolGetFederatedSources) {
		t.Fatalf("a node without peers lists %v", listedNames(t, list))
	}
	reloadEndorsing(t, srv, cfg, 40, 1)
	// The notification is queued apart from the answers: it comes before
	// the ping's answer or right after it.
	_, notes := c.request("ping", `{}`)
	if len(notes) == 0 {
		notes = append(notes, c.read()["method"].(string))
	}
	if len(notes) != 1 || notes[0] != "notifications/tools/list_changed" {
		t.Fatalf("after a reload that adds a peer: %v", notes)
	}
	list, notes = c.request("tools/list", `{}`)
	if !slices.Contains(listedNames(t, list), gen.ToolGetFederatedSources) || len(notes) != 0 {
		t.Errorf("after the notification: %v (and %v)", listedNames(t, list), notes)
	}
}

// A stdio session is not told of a reload that changes nothing it lists
// (the categories, the catalog, the number of peers): from its start to
// the end of its input it hears one notification, for the one reload
// that gave the node peers.
func TestStdioSessionNotToldOfAReloadThatChangesNothingListed(t *testing.T) {
	srv, cfg := startCatalog(t, 40, 150)
	c := newStdioClient(t, srv.MCP)
	c.request("initialize", initParams)
	var notes []string
	collect := func(_ map[string]any, n []string) { notes = append(notes, n...) }
	collect(c.request("tools/list", `{}`))
	reloadEndorsing(t, srv, cfg, 39, 0)
	collect(c.request("ping", `{}`))
	reloadEndorsing(t, srv, cfg, 39, 1)
	collect(c.request("ping", `{}`))
	collect(c.request("tools/list", `{}`))
	reloadEndorsing(t, srv, cfg, 41, 2)
	collect(c.request("ping", `{}`))
	// Every notification told is written before the server ends.
	c.in.Close()
	for c.out.Scan() {
		var m map[string]any
		if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		notes = append(notes, m["method"].(string))
	}
	if len(notes) != 1 || notes[0] != "notifications/tools/list_changed" {
		t.Errorf("notifications over the session: %v, want one", notes)
	}
}

// listener is a session of srv, initialized, that listed the tools at
// the public tier and counts the times it is told they changed.
func listener(t *testing.T, srv *mcp.Server) *atomic.Int32 {
	t.Helper()
	var told atomic.Int32
	sess := srv.NewSession()
	t.Cleanup(sess.Listen(func() { told.Add(1) }))
	for _, line := range []string{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + initParams + `}`, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`} {
		m, _, perr := jsonrpc.Parse([]byte(line))
		if perr != nil {
			t.Fatal(perr)
		}
		if resp := sess.Handle(context.Background(), m, nil); strings.Contains(string(resp), `"error":{`) {
			t.Fatal(string(resp))
		}
	}
	return &told
}

// A listening session is told exactly when what it lists changes: not
// after a reload that changes the categories, the catalog or the number
// of peers while it lists get_federated_sources either way; once when
// the peers come and once when they go.
func TestSessionToldOnlyWhenItsListChanges(t *testing.T) {
	srv, cfg := startCatalog(t, 40, 150)
	told := listener(t, srv.MCP)
	for _, step := range []struct {
		what          string
		n, endorsed   int
		want          int32
		federatedTool bool
	}{
		{"the same registry again", 40, 0, 0, false},
		{"fewer categories, a new catalog", 39, 0, 0, false},
		{"past the catalog's limit", 151, 0, 0, false},
		{"a first peer", 39, 1, 1, true},
		{"a second peer", 39, 2, 1, true},
		{"other categories, the peers kept", 41, 2, 1, true},
		{"no peer", 41, 0, 2, false},
	} {
		reloadEndorsing(t, srv, cfg, step.n, step.endorsed)
		if got := told.Load(); got != step.want {
			t.Errorf("after %s: told %d times, want %d", step.what, got, step.want)
		}
		if listed := strings.Contains(string(srv.MCP.ToolsList(gen.TierPublic)), `"name":"`+gen.ToolGetFederatedSources+`"`); listed != step.federatedTool {
			t.Errorf("after %s: get_federated_sources listed %v", step.what, listed)
		}
	}
}
