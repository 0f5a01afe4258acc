package mcp

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
)

// The instructions name tools by hand: each name they give must be a
// tool the server has, so a renamed or removed tool cannot leave the
// model told to call something that is not there.
func TestInstructionsNameRealTools(t *testing.T) {
	var names []string
	for _, tool := range gen.Tools {
		names = append(names, tool.Name)
	}
	words := regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)+\b`).FindAllString(Instructions+FederationInstructions, -1)
	if len(words) == 0 {
		t.Fatal("the instructions name no tool")
	}
	for _, w := range words {
		if !slices.Contains(names, w) {
			t.Errorf("the instructions name %q, which is not a tool (tools: %v)", w, names)
		}
	}
}

// A node that follows endorsed curators says so in its instructions,
// naming get_federated_sources (issue 47, row 5); one that does not, does
// not. Both initialize and server/discover carry them.
func TestInstructionsNameTheFederationOnlyWhenThereIsOne(t *testing.T) {
	for _, federated := range []bool{false, true} {
		s := NewServer(Config{Federated: federated})
		v := s.view.Load()
		init := appendInitializeResult(nil, LegacyVersions[0], s.serverInfo, v.instructions, false)
		for name, got := range map[string][]byte{"initialize": init, "server/discover": v.discover} {
			if named := strings.Contains(string(got), "get_federated_sources"); named != federated {
				t.Errorf("federated %v: %s names get_federated_sources: %v\n%s", federated, name, named, got)
			}
		}
	}
}

// A catalog given in Config ends the instructions of both initialize and
// server/discover, every slug and the registry version in it; without
// one they name no category.
func TestInstructionsCarryTheCatalog(t *testing.T) {
	cat := Catalog{Version: "1.2.0 sha256:abcdef12", Slugs: []string{"linux-hardening", "postgres-tuning"}}
	for _, catalog := range []Catalog{{}, cat} {
		s := NewServer(Config{Catalog: catalog})
		v := s.view.Load()
		init := appendInitializeResult(nil, LegacyVersions[0], s.serverInfo, v.instructions, false)
		for name, got := range map[string][]byte{"initialize": init, "server/discover": v.discover} {
			has := strings.Contains(string(got), "Categories (registry 1.2.0 sha256:abcdef12)") && strings.Contains(string(got), "linux-hardening, postgres-tuning.")
			if has != (catalog.Version != "") || (catalog.Version == "") == strings.Contains(string(got), "linux-hardening") {
				t.Errorf("catalog %q: %s:\n%s", catalog, name, got)
			}
		}
	}
}
