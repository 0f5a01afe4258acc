package registry

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// The size limit is the caller's: a file one byte over it is refused
// before it is read, bytes made in memory are held to it by LoadLimit,
// and Load itself takes any size, since its callers bounded their reads.
func TestSizeLimit(t *testing.T) {
	data := frozen.Registry(frozen.Basic)
	if _, err := LoadLimit(data, int64(len(data))); err != nil {
		t.Errorf("a registry exactly at the limit: %v", err)
	}
	var big *TooLargeError
	if _, err := LoadLimit(data, int64(len(data))-1); !errors.As(err, &big) || big.Size != int64(len(data)) || big.Limit != int64(len(data))-1 {
		t.Errorf("a registry one byte over the limit: %v, want a *TooLargeError with its size and the limit", err)
	}
	path := filepath.Join(t.TempDir(), "registry.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFileLimit(path, int64(len(data))); err != nil {
		t.Errorf("a file exactly at the limit: %v", err)
	}
	if _, err := LoadFileLimit(path, int64(len(data))-1); !errors.Is(err, safefile.ErrTooLarge) {
		t.Errorf("a file one byte over the limit: %v, want safefile.ErrTooLarge", err)
	}
	if _, err := LoadFile(path); err != nil {
		t.Errorf("LoadFile under the default limit: %v", err)
	}
}

// The generated registries the scale benchmarks use must be ones 3gs
// accepts without a word: every rule, no warning, as many categories as
// asked, and the same ones for the same seed.
func TestGeneratedRegistry(t *testing.T) {
	const n = 3000
	data := registrytest.Encode(n, 7)
	r, err := Load(data)
	if err != nil {
		t.Fatalf("generated registry does not load: %v", err)
	}
	if len(r.Categories()) != n {
		t.Errorf("%d categories, want %d", len(r.Categories()), n)
	}
	if w := Warnings(r); len(w) > 0 {
		t.Errorf("%d warnings, the first: %v", len(w), w[0])
	}
	if string(registrytest.Encode(n, 7)) != string(data) {
		t.Error("the same seed gave another registry")
	}
	// Realistic text: many distinct names and words, not one repeated.
	names, words := map[string]bool{}, map[string]bool{}
	for _, c := range r.Categories() {
		names[c.Name] = true
		for _, w := range strings.Fields(c.Description) {
			words[strings.ToLower(w)] = true
		}
	}
	if len(names) < n*9/10 || len(words) < n/5 {
		t.Errorf("%d distinct names and %d distinct description words in %d categories", len(names), len(words), n)
	}
	per := float64(len(data)) / n
	if per < 1000 || per > 2000 {
		t.Errorf("%.0f bytes a category; curated ones are about 1,400", per)
	}
	qs := registrytest.Queries(registrytest.Generate(n, 7), 200, 1)
	if len(qs) != 200 || qs[0] == "" {
		t.Errorf("queries: %q", qs[:min(3, len(qs))])
	}
}

// BenchmarkLoadGenerated is a whole load (decode, rules, digest, index)
// of generated registries of growing size: what validate and the start of
// serve pay. B/op is what a load allocates, most of which the snapshot
// keeps.
func BenchmarkLoadGenerated(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			data := registrytest.Encode(n, 1)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Load(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Categories are checked on several cores once there are enough of them;
// the problems still come out in slug order, every one of them, as from a
// single pass.
func TestRulesInParallelKeepOrder(t *testing.T) {
	doc := registrytest.Generate(5000, 3)
	slugs := make([]string, 0, len(doc.Categories))
	for s := range doc.Categories {
		slugs = append(slugs, s)
	}
	slices.Sort(slugs)
	var want []string
	for i := 7; i < len(slugs); i += 611 { // spread over every run
		c := doc.Categories[slugs[i]]
		c.Name = "bad\u202ename"
		c.QueryPatterns = append(slices.Clone(c.QueryPatterns), "the and of")
		doc.Categories[slugs[i]] = c
		want = append(want, "categories."+slugs[i]+".name", "categories."+slugs[i]+".query_patterns["+strconv.Itoa(len(c.QueryPatterns)-1)+"]")
	}
	_, err := Load(gen.EncodeRegistry(doc))
	var errs strictjson.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load: %v", err)
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Path)
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems at\n%v\nwant\n%v", got, want)
	}
}
