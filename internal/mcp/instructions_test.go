package mcp

import (
	"regexp"
	"slices"
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
	words := regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)+\b`).FindAllString(Instructions, -1)
	if len(words) == 0 {
		t.Fatal("the instructions name no tool")
	}
	for _, w := range words {
		if !slices.Contains(names, w) {
			t.Errorf("the instructions name %q, which is not a tool (tools: %v)", w, names)
		}
	}
}
