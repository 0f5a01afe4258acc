package mcpb

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/mcp"
)

// The bundle lists exactly the tools an anonymous caller's tools/list
// shows, in the same order: the list comes from the generated table, so a
// new tool schema reaches the bundle without anyone editing it.
func TestManifestToolsAreThePublicList(t *testing.T) {
	m, err := Build("1.2.3", Platform{"linux", "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range m.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || strings.Contains(tool.Description, "Example") {
			t.Errorf("%s: description %q is not one sentence of what it does", tool.Name, tool.Description)
		}
	}
	if want := mcp.ListedFor(gen.TierPublic, mcp.Config{}); !slices.Equal(names, want) {
		t.Errorf("the manifest lists %v, tools/list for the public tier %v", names, want)
	}
	// A tool a token unlocks says so; a public one does not.
	for _, tool := range m.Tools {
		var tier gen.Tier
		for _, g := range gen.Tools {
			if g.Name == tool.Name {
				tier = g.Tier
			}
		}
		if needs := strings.Contains(tool.Description, "token."); needs != (tier > gen.TierPublic) {
			t.Errorf("%s (tier %s): %q", tool.Name, tier, tool.Description)
		}
	}
}

// Each platform's manifest starts its own binary and names its own system,
// in the names MCPB hosts use (win32, not windows).
func TestManifestPerPlatform(t *testing.T) {
	for _, p := range Platforms {
		m, err := Build("0.1.0", p)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"darwin": "darwin", "linux": "linux", "windows": "win32"}[p.OS]
		if !slices.Equal(m.Compatibility.Platforms, []string{want}) {
			t.Errorf("%s: platforms %v", p, m.Compatibility.Platforms)
		}
		if m.Server.EntryPoint != p.Binary() || m.Server.MCPConfig.Command != "${__dirname}/"+p.Binary() {
			t.Errorf("%s: entry point %q, command %q", p, m.Server.EntryPoint, m.Server.MCPConfig.Command)
		}
		if strings.HasSuffix(p.Binary(), ".exe") != (p.OS == "windows") {
			t.Errorf("%s: binary %s", p, p.Binary())
		}
	}
	if _, err := Build("0.1.0", Platform{"plan9", "amd64"}); err == nil {
		t.Error("a manifest was built for plan9")
	}
	for _, v := range []string{"", "v1.2.3", "(devel)", "1.2", "latest"} {
		if _, err := Build(v, Platforms[0]); err == nil {
			t.Errorf("version %q was accepted", v)
		}
	}
}

// Every setting reaches 3gs as an environment variable with an empty
// default, and nothing the user enters becomes an argument: an empty
// setting then means "unset" to 3gs, never a literal placeholder or a flag
// without its value (see userConfig).
func TestManifestUserConfig(t *testing.T) {
	m, err := Build("0.1.0", Platform{"darwin", "arm64"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Server struct {
			MCPConfig struct {
				Args []string          `json:"args"`
				Env  map[string]string `json:"env"`
			} `json:"mcp_config"`
		} `json:"server"`
		UserConfig map[string]map[string]any `json:"user_config"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(doc.Server.MCPConfig.Args, []string{"serve"}) {
		t.Errorf("args %v", doc.Server.MCPConfig.Args)
	}
	used := map[string]bool{}
	for name, v := range doc.Server.MCPConfig.Env {
		key, ok := strings.CutPrefix(v, "${user_config.")
		key, ok2 := strings.CutSuffix(key, "}")
		if !ok || !ok2 {
			t.Errorf("%s=%q is not one setting", name, v)
			continue
		}
		opt, ok := doc.UserConfig[key]
		if !ok {
			t.Errorf("%s names the setting %q, which the manifest does not have", name, key)
		}
		if def, ok := opt["default"]; !ok || def != "" || opt["required"] != false {
			t.Errorf("setting %s: default %v (present: %v), required %v", key, def, ok, opt["required"])
		}
		used[key] = true
	}
	for key := range doc.UserConfig {
		if !used[key] {
			t.Errorf("setting %s reaches no environment variable", key)
		}
	}
	if doc.UserConfig["token"]["sensitive"] != true {
		t.Error("the token is not marked sensitive")
	}
	if !strings.Contains(string(data), `"command": "${__dirname}/server/3gs"`) {
		t.Errorf("the command is not written as is:\n%s", data)
	}
}

func TestBundleNames(t *testing.T) {
	for _, p := range Platforms {
		name := BundleName("1.2.3-rc.1", p)
		v, q, err := ParseBundleName(name)
		if err != nil || v != "1.2.3-rc.1" || q != p {
			t.Errorf("%s: read back %q %v %v", name, v, q, err)
		}
	}
	for _, bad := range []string{"3gs-1.2.3.mcpb", "3gs-1.2.3-linux-mips.mcpb", "other-1.2.3-linux-amd64.mcpb", "3gs-1.2.3-linux-amd64.zip"} {
		if _, _, err := ParseBundleName(bad); err == nil {
			t.Errorf("%s was read as a bundle name", bad)
		}
	}
	for tag, want := range map[string]string{"v1.2.3": "1.2.3", "0.1.0": "0.1.0", "v2.0.0-rc.1": "2.0.0-rc.1"} {
		if got, err := Version(tag); err != nil || got != want {
			t.Errorf("Version(%q) = %q, %v", tag, got, err)
		}
	}
}
