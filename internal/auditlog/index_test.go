package auditlog

import (
	"time"

	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
)

// The index answers every query with the page a full read gives, at every
// head, as the log grows and when the file is replaced.
func TestIndexMatchesReadPage(t *testing.T) {
	path, _, head := pageLog(t, "a", "b", "-a", "c", "a", "b", "b", "-c", "d", "a")
	var ix Index
	queries := []Query{{}, {Limit: 2}, {Since: 3}, {Since: 3, Limit: 1}, {Slug: "a"}, {Slug: "a", Limit: 1}, {Slug: "a", Since: 2, Limit: 1},
		{Action: "remove"}, {Action: "upsert", Slug: "b", Limit: 1}, {Slug: "nope"}, {Action: "start"}, {Since: 99}}
	for upTo := 0; upTo <= head.Seq; upTo++ {
		for _, q := range queries {
			want, werr := ReadPage(path, q, upTo)
			got, gerr := ix.ReadPage(path, q, upTo)
			if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(want, got) {
				t.Fatalf("up to %d, %+v: index gives %+v, %v; a full read %+v, %v", upTo, q, got, gerr, want, werr)
			}
		}
	}
	// Replaced by another log: the index starts again.
	other, _, oh := pageLog(t, "x", "y")
	data, _ := os.ReadFile(other)
	os.Remove(path)
	os.WriteFile(path, data, 0o644)
	got, err := ix.ReadPage(path, Query{Slug: "x"}, oh.Seq)
	if err != nil || len(got.Entries) != 1 || *got.Entries[0].Slug != "x" || got.Head != oh {
		t.Fatalf("after the file was replaced: %+v, %v", got, err)
	}
	// Cut below the head asked for: said so, as ReadPage says it.
	os.WriteFile(path, data[:bytes.IndexByte(data, '\n')+1], 0o644)
	var fresh Index
	if _, err := fresh.ReadPage(path, Query{}, 3); err == nil || !strings.Contains(err.Error(), "ends at seq 1, before seq 3") {
		t.Errorf("a cut log: %v", err)
	}
}

// A filtered page on a large log reads only what it returns: after the
// first page, a query for a slug no entry has decodes nothing.
func BenchmarkIndexedSlugMiss(b *testing.B) {
	path, head := bigLog(b, 100_000)
	var ix Index
	if _, err := ix.ReadPage(path, Query{}, head); err != nil { // built once, as a server's first query does
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		read func() (*Page, error)
	}{
		{"full-read", func() (*Page, error) { return ReadPage(path, Query{Slug: "nope"}, head) }},
		{"index", func() (*Page, error) { return ix.ReadPage(path, Query{Slug: "nope"}, head) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// bigLog writes a log of n entries quickly, unsigned (as a log from
// before signing is) and in one append: a start, then upserts of 1,000
// slugs in turn.
func bigLog(tb testing.TB, n int) (string, int) {
	tb.Helper()
	path := tb.TempDir() + "/registry.json.audit.jsonl"
	l := Open(path, &Report{})
	es := []*gen.AuditEntry{{Time: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), Action: gen.AuditActionStart, Actor: "cli", Version: "1.0.0", After: pageDigest(0)}}
	for i := 1; i < n; i++ {
		slug, before := fmt.Sprintf("topic-%d", i%1000), pageDigest(i-1)
		es = append(es, &gen.AuditEntry{Time: time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC), Action: gen.AuditActionUpsert, Slug: &slug, Actor: "root", Version: fmt.Sprintf("1.0.%d", i), Before: &before, After: pageDigest(i)})
	}
	head, err := l.Append(nil, es...)
	if err != nil {
		tb.Fatal(err)
	}
	return path, head.Seq
}

// Pages read at once, while the index grows to later heads, agree with a
// full read (run with -race).
func TestIndexConcurrentReaders(t *testing.T) {
	path, _, head := pageLog(t, "a", "b", "-a", "c", "a", "b", "b", "-c", "d", "a")
	var ix Index
	done := make(chan error, 8)
	for g := range 8 {
		go func() {
			for upTo := 1 + g%3; upTo <= head.Seq; upTo++ {
				q := Query{Slug: []string{"a", "b", "nope"}[g%3], Limit: 1 + g%2}
				want, _ := ReadPage(path, q, upTo)
				got, err := ix.ReadPage(path, q, upTo)
				if err != nil || !reflect.DeepEqual(want, got) {
					done <- fmt.Errorf("up to %d, %+v: %+v, %v; want %+v", upTo, q, got, err, want)
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
