package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// --proposals (issue 48): a node lists and takes proposals when it edits
// its registry (auto) or is told to (on); off hides the community tools,
// which then answer that this node takes none; the embedded registry
// takes none, and on there is a warning at start.
func TestServeProposalsSetting(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "registry.json")
	os.WriteFile(reg, testkit.WithCurator(frozen.Registry(frozen.Basic), "pk:placeholder"), 0o644)
	list := `{"jsonrpc":"2.0","id":"list","method":"tools/list"}`
	propose := `{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"list_proposals","arguments":{}}}`
	listed := func(res map[string]map[string]any) []string {
		var names []string
		r, _ := res["list"]["result"].(map[string]any)
		tools, _ := r["tools"].([]any)
		for _, tool := range tools {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		return names
	}
	for _, c := range []struct {
		name   string
		env    map[string]string
		args   []string
		listed bool
	}{
		{"embedded", nil, nil, false},
		{"registry, auto", nil, []string{"--registry", reg}, true},
		{"registry, on", nil, []string{"--registry", reg, "--proposals", "on"}, true},
		{"registry, off", nil, []string{"--registry", reg, "--proposals", "off"}, false},
		{"registry, THREEGS_PROPOSALS=off", map[string]string{"THREEGS_PROPOSALS": "off"}, []string{"--registry", reg}, false},
	} {
		code, res, errOut := serveLines(t, c.env, c.args, list, propose)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
		}
		if got := slices.Contains(listed(res), "propose_change"); got != c.listed {
			t.Errorf("%s: propose_change listed %v, want %v (%v)", c.name, got, c.listed, listed(res))
		}
		r, _ := res["p"]["result"].(map[string]any)
		text := ""
		if content, _ := r["content"].([]any); len(content) > 0 {
			text, _ = content[0].(map[string]any)["text"].(string)
		}
		if refused := r["isError"] == true && strings.Contains(text, "takes no proposals"); refused == c.listed {
			t.Errorf("%s: list_proposals answered %v", c.name, res["p"])
		}
	}
	if code, res, errOut := serveLines(t, nil, []string{"--proposals", "on"}, list); code != ExitOK || !strings.Contains(errOut, "taking no proposals despite --proposals on") || slices.Contains(listed(res), "propose_change") {
		t.Errorf("embedded registry with --proposals on: exit %d, listed %v, %s", code, listed(res), errOut)
	}
	if code, _, errOut := serveLines(t, nil, []string{"--proposals", "yes"}, list); code == ExitOK || !strings.Contains(errOut, "on, off or auto") {
		t.Errorf("--proposals yes: exit %d, %s", code, errOut)
	}
}
