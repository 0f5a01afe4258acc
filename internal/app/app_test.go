package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/linkcheck/linkchecktest"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/registry"
)

// testConfig serves an unsigned registry file of one category, c0000,
// with no query log, tokens, peers or follower.
func testConfig(t *testing.T) *Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registry.json")
	data := linkchecktest.Registry([]string{"https://a.example/1", "https://a.example/2", "https://a.example/3"}, "https://a.example")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return &Config{
		Registry: path, MaxRegistry: registry.MaxSize, Threshold: 0.4,
		NewMatcher: func(r *registry.Registry) matcher.Matcher { return matcher.New(r) },
		Validity:   time.Hour,
		Peers:      peer.Config{Refresh: time.Minute, StaleAfter: time.Hour, Parallel: 1, Fetcher: peer.NewFetcher(1<<20, time.Second).AsOperator(true)},
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)), Version: "test",
	}
}

// A server started without a query log answers get_sources: the tools get
// no query log at all, not a nil one they would call.
func TestStartWithoutQueryLog(t *testing.T) {
	srv, err := Start(context.Background(), testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	slug := "c0000"
	out, err := srv.Tools.GetSources(context.Background(), &gen.GetSourcesInput{Slug: &slug})
	if err != nil || out.Slug == nil || *out.Slug != slug {
		t.Fatalf("get_sources %s: %+v, %v", slug, out, err)
	}
}

// A registry that does not load is a *LoadError naming the file.
func TestStartRefusesARegistryThatDoesNotLoad(t *testing.T) {
	c := testConfig(t)
	if err := os.WriteFile(c.Registry, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), c)
	le, ok := err.(*LoadError)
	if !ok || le.Path != c.Registry {
		t.Fatalf("Start on a registry that does not load: %T %v", err, err)
	}
}
