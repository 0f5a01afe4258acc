package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/gen/gentest"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// serving is handlers serving the registry data, with its signature
// document sig (nil: none), the index matcher and the default threshold,
// and the rest of c: the set-up every test of a served registry shares.
func serving(t testing.TB, data, sig []byte, c Config) (*Handlers, *registry.Registry) {
	t.Helper()
	reg, err := registry.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	c.Registry, c.Matcher, c.Threshold, c.Signature = reg, matcher.New(reg), DefaultThreshold, signature.Check(reg, sig)
	return New(c), reg
}

func handlers(t *testing.T, data []byte) *Handlers {
	t.Helper()
	h, _ := serving(t, data, nil, Config{})
	return h
}

// Every result, error results included, must match the tool's outputSchema:
// MCP clients validate structuredContent against it.
func TestResultsMatchOutputSchemas(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	calls := []struct{ tool, args string }{
		{gen.ToolGetSources, `{"query":"learn rust"}`},
		{gen.ToolGetSources, `{"query":"quantum physics supercollider"}`},
		{gen.ToolGetSources, `{"query":" "}`},
		{gen.ToolGetSources, `{"query":"the of and"}`},
		{gen.ToolGetSources, `{"query":"kubernetes","threshold":0}`},
		{gen.ToolListCategories, `{}`},
		{gen.ToolGetProvenance, `{}`},
		{gen.ToolGetEndorsements, `{}`},
		{gen.ToolExplainMatch, `{"query":"how do I harden a linux server"}`},
		{gen.ToolExplainMatch, `{"query":"zzzz qqqq","limit":1,"threshold":0.9}`},
		{gen.ToolExplainMatch, `{"query":"the of and"}`},
		// No registry file here: the admin tools answer with the state kept.
		{gen.ToolUpsertCategory, `{"slug":"x","category":{"name":"X","description":"D","query_patterns":["a b","c d","e f"],"sources":[` +
			`{"rank":1,"name":"A","url":"https://a.example/","type":"tool","why":"W"},{"rank":2,"name":"B","url":"https://b.example/","type":"tool","why":"W"},` +
			`{"rank":3,"name":"C","url":"https://c.example/","type":"tool","why":"W"}]}}`},
		{gen.ToolRemoveCategory, `{"slug":"rust-learning"}`},
		{gen.ToolReloadRegistry, `{}`},
	}
	// And every example call of every tool, from the generated table.
	for _, tool := range gen.Tools {
		for _, args := range tool.Examples.Arguments {
			calls = append(calls, struct{ tool, args string }{tool.Name, args})
		}
	}
	for _, c := range calls {
		res, err := gen.LookupTool(c.tool).Call(context.Background(), h, []byte(c.args))
		var structured []byte
		var toolErr *gen.ToolError
		switch {
		case err == nil:
			structured = res.Structured
			if res.Text == "" || strings.Contains(res.Text, "**") {
				t.Errorf("%s %s: text block must be plain, non-empty text: %q", c.tool, c.args, res.Text)
			}
		case errors.As(err, &toolErr):
			structured, _ = json.Marshal(toolErr.Structured)
		default:
			t.Fatalf("%s %s: %v", c.tool, c.args, err)
		}
		if _, err := gentest.DecodeOutput(c.tool, structured); err != nil {
			t.Errorf("%s %s: result %s breaks the output schema: %v", c.tool, c.args, structured, err)
		}
	}
}

// Each of our categories is found from a paraphrase, and endorsements with
// names render.
func TestSharedFixtureParaphrases(t *testing.T) {
	data, err := os.ReadFile(testkit.SharedRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	h := handlers(t, data)
	for query, want := range map[string]string{
		"how do I run a bitcoin full node at home": "bitcoin-node-setup",
		"learning rust programming":                "rust-learning",
	} {
		out, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr(query)})
		if err != nil || *out.Slug != want || len(out.Sources) != 3 {
			t.Errorf("%q: got %v, %v; want %s", query, out, err, want)
		}
	}
}

// Runner-up categories come back as alternatives only above half the
// threshold, at most two, best first; the no-match text names them.
func TestAlternatives(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	out, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("rust and go programming")})
	if err != nil {
		t.Fatal(err)
	}
	if *out.Slug != "rust-learning" || len(out.Alternatives) == 0 || out.Alternatives[0].Slug != "go-learning" || out.Alternatives[0].Name != "Learning Go" {
		t.Fatalf("got %s with alternatives %+v, want rust-learning then go-learning", *out.Slug, out.Alternatives)
	}
	if !strings.Contains(h.GetSourcesText(out), "Also close:\n- go-learning (Learning Go, score: ") {
		t.Errorf("text does not name the alternative:\n%s", h.GetSourcesText(out))
	}
	for _, a := range out.Alternatives {
		if a.Score <= DefaultThreshold/2 || a.Score > *out.Score {
			t.Errorf("alternative %+v outside (threshold/2, best]", a)
		}
	}
	// Raised threshold: no match, the closest and the runner-up named.
	th := 0.7
	_, err = h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("rust and go programming"), Threshold: &th})
	var te *gen.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("threshold 0.7: %v, want a tool error", err)
	}
	miss := te.Structured.(*gen.GetSourcesOutput)
	if miss.Closest == nil || miss.Closest.Slug != "rust-learning" || len(miss.Alternatives) == 0 || miss.Alternatives[0].Slug != "go-learning" {
		t.Fatalf("closest %+v alternatives %+v", miss.Closest, miss.Alternatives)
	}
	if len(miss.Candidates) < 2 || miss.Candidates[0].Slug != "rust-learning" || miss.Candidates[1].Slug != "go-learning" || miss.AvailableCategories != nil {
		t.Errorf("candidates %+v, available %v", miss.Candidates, miss.AvailableCategories)
	}
	if miss.CategoryCount == nil || *miss.CategoryCount != frozen.BasicCategories {
		t.Errorf("category_count %v, want the %d categories of the registry", miss.CategoryCount, frozen.BasicCategories)
	}
	if !strings.Contains(te.Text, fmt.Sprintf("The registry's %d categories, the 4 that share words with the query first, closest first, then the others:", frozen.BasicCategories)+"\n- rust-learning (Learning Rust, score 0.") || !strings.Contains(te.Text, "\n- go-learning (") || !strings.Contains(te.Text, "call get_sources with its slug") {
		t.Errorf("no-match text: %s", te.Text)
	}
	// A specific query has no runner-up worth naming.
	out, err = h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("shellcheck")})
	if err != nil || len(out.Alternatives) != 0 {
		t.Errorf("shellcheck: %v alternatives %+v, want none", err, out.Alternatives)
	}
}

// Scores in text are rounded down so that a score below the threshold
// never reads as equal to it.
func TestScoreTextRoundsDown(t *testing.T) {
	for in, want := range map[float64]string{0.898: "0.89", 0.9: "0.90", 0.29: "0.29", 1: "1.00", 0: "0.00"} {
		if got := fmtScore(in); got != want {
			t.Errorf("fmtScore(%v) = %s, want %s", in, got, want)
		}
	}
}
