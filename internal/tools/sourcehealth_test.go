package tools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/gen/gentest"
	"github.com/three-good-sources/3gs/internal/linkcheck/linkchecktest"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
)

// get_sources gives each checked source its health, through the public
// tool result (structured and text), and says first when all three of a
// category's sources are gone.
func TestGetSourcesHealth(t *testing.T) {
	urls := []string{"https://a.example/1", "https://a.example/2", "https://a.example/3", "https://b.example/1", "https://b.example/2", "https://b.example/3"}
	// The text says how long ago, from the clock.
	now := time.Now()
	h := handlers(t, linkchecktest.Registry(urls, "https://x.example"))
	call := func(slug string) (*gen.GetSourcesOutput, string) {
		t.Helper()
		res, err := gen.LookupTool(gen.ToolGetSources).Call(context.Background(), h, []byte(`{"slug":"`+slug+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		out, err := gentest.DecodeOutput(gen.ToolGetSources, res.Structured)
		if err != nil {
			t.Fatalf("result breaks the output schema: %v\n%s", err, res.Structured)
		}
		return out.(*gen.GetSourcesOutput), res.Text
	}
	// Before any check: no health, and the text says nothing of it.
	out, text := call("c0000")
	if out.Sources[0].Health != nil || strings.Contains(text, "Health:") {
		t.Fatalf("health before any check: %+v\n%s", out.Sources[0].Health, text)
	}
	checked := now.Add(-72*time.Hour - time.Minute).UTC().Truncate(time.Second)
	doc := &gen.Sourcehealth{CheckedAt: checked, RegistryVersion: "1.0.0", Sources: []gen.CheckedSource{
		{Category: "c0000", Rank: 1, URL: urls[0], Status: "ok", CheckedAt: checked},
		{Category: "c0000", Rank: 2, URL: urls[1], Status: "gone", CheckedAt: checked},
		{Category: "c0001", Rank: 1, URL: urls[3], Status: "gone", CheckedAt: checked},
		{Category: "c0001", Rank: 2, URL: urls[4], Status: "gone", CheckedAt: checked},
		{Category: "c0001", Rank: 3, URL: urls[5], Status: "gone", CheckedAt: checked},
	}}
	sourcehealth.Count(doc)
	h.SetSourceHealth(sourcehealth.NewIndex(doc))

	out, text = call("c0000")
	if hs := out.Sources[1].Health; hs == nil || hs.Status != gen.CheckStatusGone || !hs.CheckedAt.Equal(checked) {
		t.Errorf("source 2: %+v", hs)
	}
	if out.Sources[2].Health != nil {
		t.Errorf("source 3 was never checked: %+v", out.Sources[2].Health)
	}
	if !strings.Contains(text, "   Health: last checked 3 days ago: gone") || !strings.Contains(text, "   Health: last checked 3 days ago: ok") || strings.HasPrefix(text, "Warning") {
		t.Errorf("text:\n%s", text)
	}
	_, text = call("c0001")
	if !strings.HasPrefix(text, "Warning: all 3 sources of this category were gone when last checked (last checked 3 days ago: gone)") {
		t.Errorf("all gone is not said first:\n%s", text)
	}
	h.SetSourceHealth(nil)
	if out, _ := call("c0001"); out.Sources[0].Health != nil {
		t.Error("health after it was cleared")
	}
}
