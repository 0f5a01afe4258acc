package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
)

func handleLine(t *testing.T, sess *Session, line string) string {
	t.Helper()
	m, _, perr := jsonrpc.Parse([]byte(line))
	if perr != nil {
		t.Fatal(perr)
	}
	return string(sess.Handle(context.Background(), m, nil))
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`

// Only a session that can be told (Listen: stdio) declares
// tools.listChanged in its initialize; one that cannot (a Streamable HTTP
// session, which has no stream to carry it) and server/discover (modern
// clients hear of changes only on subscriptions/listen, not served) say
// false.
func TestListChangedDeclaredOnlyWhereItIsTold(t *testing.T) {
	s := NewServer(Config{})
	told := s.NewSession()
	stop := told.Listen(func() {})
	defer stop()
	for name, c := range map[string]struct {
		got  string
		want bool
	}{
		"listening initialize": {handleLine(t, told, initLine), true},
		"initialize":           {handleLine(t, s.NewSession(), initLine), false},
		"server/discover":      {string(s.view.Load().discover), false},
	} {
		if got := strings.Contains(c.got, `"capabilities":{"tools":{"listChanged":true}}`); got != c.want || !strings.Contains(c.got, `"listChanged"`) {
			t.Errorf("%s: listChanged true %v, want %v: %s", name, got, c.want, c.got)
		}
	}
}

// Refresh tells a listening session only when the list of a tier it
// listed with changed: not one that has not initialized or never listed,
// not after stop.
func TestRefreshTellsWhoseListChanged(t *testing.T) {
	node := Node{}
	s := NewServer(Config{Node: func() Node { return node }})
	counts := map[string]*int{}
	listen := func(name string, lines ...string) func() {
		sess := s.NewSession()
		n := new(int)
		counts[name] = n
		stop := sess.Listen(func() { *n++ })
		for _, l := range lines {
			handleLine(t, sess, l)
		}
		return stop
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	listen("listed", initLine, list)
	listen("never listed", initLine)
	// A modern request lists with no initialize: the session has listed,
	// and only its missing handshake keeps it from being told.
	modern := `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	listen("not initialized", modern)
	stop := listen("stopped", initLine, list)
	stop()
	node.Catalog = Catalog{Version: "1", Slugs: []string{"a"}}
	s.Refresh()
	if !strings.Contains(s.Instructions(), "Categories (registry 1)") {
		t.Errorf("the new catalog is not in the instructions: %s", s.Instructions())
	}
	node.Federated = true
	s.Refresh()
	s.Refresh()
	want := map[string]int{"listed": 1, "never listed": 0, "not initialized": 0, "stopped": 0}
	for name, n := range counts {
		if *n != want[name] {
			t.Errorf("%s: told %d times, want %d", name, *n, want[name])
		}
	}
	if !strings.Contains(string(s.ToolsList(gen.TierPublic)), gen.ToolGetFederatedSources) {
		t.Error("get_federated_sources not listed after the refresh")
	}
}

// Every listedWhen condition the schemas may name (the generated
// gen.ListedWhen constants) is decided by Listed: each lists its tool on
// some node to some caller, and ListedAlways to everyone of its tier.
func TestEveryListedWhenIsDecided(t *testing.T) {
	everything := Node{Federated: true, Proposals: true}
	for i := range gen.NumListedWhen {
		l := gen.ListedWhen(i)
		tool := gen.Tools[0]
		tool.Tier, tool.ListedWhen = gen.TierPublic, l
		if !listed(&tool, gen.TierAdmin, everything) {
			t.Errorf("listedWhen %q (%d) is listed on no node to no caller: mcp.listed does not decide it", l, int(l))
		}
		if l.String() == "unknown" || (l == gen.ListedAlways) != (l.String() == "") {
			t.Errorf("condition %d is named %q", int(l), l.String())
		}
	}
	tool := gen.Tools[0]
	tool.Tier, tool.ListedWhen = gen.TierPublic, gen.ListedAlways
	if !listed(&tool, gen.TierPublic, Node{}) {
		t.Error("a tool with no condition is not listed to its tier")
	}
}
