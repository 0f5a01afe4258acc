package sourcehealth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/linkcheck"
	"github.com/three-good-sources/3gs/internal/linkcheck/linkchecktest"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
)

func testRegistry(t *testing.T, urls ...string) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(linkchecktest.Registry(urls, "https://x.example"))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestWriteReadIndex(t *testing.T) {
	reg := testRegistry(t, "https://a.example/", "https://b.example/", "https://c.example/")
	at := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	results := []linkcheck.Result{
		{Target: linkcheck.Target{Category: "c0000", Rank: 1, URL: "https://a.example/"}, Status: linkcheck.OK, HTTPStatus: 200, Title: "A", Size: 120, CheckedAt: at},
		{Target: linkcheck.Target{Category: "c0000", Rank: 2, URL: "https://b.example/"}, Status: linkcheck.Gone, Reason: "http 404", HTTPStatus: 404, Size: -1, CheckedAt: at},
		{Target: linkcheck.Target{Category: "c0000", Rank: 3, URL: "https://c.example/"}, Status: linkcheck.Redirected, Reason: "http 301", HTTPStatus: 301, Location: "https://c.example/new", Size: -1, CheckedAt: at},
	}
	doc := Doc(reg, results, at)
	if got := SummaryLine(doc.Summary); got != "1 ok, 1 redirected, 1 gone" {
		t.Errorf("summary %q", got)
	}
	path := PathFor(filepath.Join(t.TempDir(), "registry.json"))
	if d, err := Read(path); d != nil || err != nil {
		t.Fatalf("missing file: %v %v", d, err)
	}
	if err := WritePublished(path, Sign(doc, nil, at, 0)); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil || back.Summary != doc.Summary || len(back.Sources) != 3 || *back.Curator != "Ada Checker" {
		t.Fatalf("%v %+v", err, back)
	}
	ix := NewIndex(back)
	if e, ok := ix.Lookup("https://b.example/"); !ok || e.Status != "gone" || !e.CheckedAt.Equal(at) {
		t.Errorf("%+v %v", e, ok)
	}
	if _, ok := ix.Lookup("https://nope.example/"); ok {
		t.Error("found an unchecked URL")
	}
	var none *Index
	if _, ok := none.Lookup("x"); ok {
		t.Error("nil index found something")
	}
	prev := Previous(back)
	if p := prev["https://a.example/"]; p.Title != "A" || p.Size != 120 || len(prev) != 1 {
		t.Errorf("previous %+v", prev)
	}

	// A file that is not a health file is refused, saying how to fix it.
	os.WriteFile(path, []byte(`{"nope":1}`), 0o644)
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("%v", err)
	}
	// A link at the path is neither read nor written through.
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, []byte("precious"), 0o644)
	link := PathFor(filepath.Join(t.TempDir(), "registry.json"))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WritePublished(link, Sign(doc, nil, at, 0)); err == nil {
		t.Error("wrote through a symbolic link")
	}
	if _, err := Read(link); err == nil {
		t.Error("read through a symbolic link")
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Error("the linked file changed")
	}
}

func TestMergeKeepsOtherCategories(t *testing.T) {
	reg := testRegistry(t, "https://a/1", "https://a/2", "https://a/3", "https://b/1", "https://b/2", "https://b/3")
	at := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	old := &gen.Sourcehealth{CheckedAt: at, RegistryVersion: "1.0.0", Sources: []gen.CheckedSource{
		{Category: "c0000", Rank: 1, URL: "https://a/1", Status: "gone", CheckedAt: at},
		{Category: "c0001", Rank: 1, URL: "https://b/1", Status: "ok", CheckedAt: at},
		{Category: "c0001", Rank: 2, URL: "https://b/old", Status: "ok", CheckedAt: at}, // no longer listed
		{Category: "c0009", Rank: 1, URL: "https://z/1", Status: "ok", CheckedAt: at},   // category removed
	}}
	Count(old)
	next := &gen.Sourcehealth{CheckedAt: at, RegistryVersion: "1.0.0", Sources: []gen.CheckedSource{
		{Category: "c0000", Rank: 1, URL: "https://a/1", Status: "ok", CheckedAt: at},
		{Category: "c0000", Rank: 2, URL: "https://a/2", Status: "ok", CheckedAt: at},
	}}
	Count(next)
	m := Merge(old, next, reg)
	var got []string
	for _, c := range m.Sources {
		got = append(got, c.Category+"/"+c.URL+"/"+string(c.Status))
	}
	if strings.Join(got, " ") != "c0000/https://a/1/ok c0000/https://a/2/ok c0001/https://b/1/ok" || m.Summary.Ok != 3 || m.Summary.Gone != 0 {
		t.Errorf("%v %+v", got, m.Summary)
	}
	if Merge(nil, next, reg) != next {
		t.Error("merge with no old file")
	}
}

func TestLockOneWriter(t *testing.T) {
	path := PathFor(filepath.Join(t.TempDir(), "registry.json"))
	l, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	// flock is per open file: a second lock in this process conflicts too.
	if l2, err := Lock(path); err == nil {
		l2.Unlock()
		t.Skip("this platform has no advisory locks")
	} else if !errors.Is(err, safefile.ErrHeld) {
		t.Errorf("%v", err)
	}
}

func TestAgo(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		10 * time.Second: "just now", time.Minute: "1 minute ago", 5 * time.Minute: "5 minutes ago",
		time.Hour: "1 hour ago", 30 * time.Hour: "30 hours ago", 72 * time.Hour: "3 days ago",
	} {
		if got := Ago(now.Add(-d), now); got != want {
			t.Errorf("%s: %q, want %q", d, got, want)
		}
	}
}
