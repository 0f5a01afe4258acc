package auditlog

import (
	"time"

	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
)

// pageDigest is a made-up registry digest, distinct for each i.
func pageDigest(i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprint("registry ", i)))
	return hex.EncodeToString(sum[:])
}

// pageLog writes a signed log of a start entry and then one change per
// slug (upsert, except slugs starting with "-", which are removes of the
// rest), and returns its path, its lines and its head.
func pageLog(t *testing.T, slugs ...string) (string, [][]byte, Head) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registry.json.audit.jsonl")
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	l := Open(path, &Report{})
	entries := []*gen.AuditEntry{{Time: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), Action: gen.AuditActionStart, Actor: "cli", Version: "1.0.0", After: pageDigest(0)}}
	for i, s := range slugs {
		action := gen.AuditActionUpsert
		if rest, ok := strings.CutPrefix(s, "-"); ok {
			action, s = gen.AuditActionRemove, rest
		}
		before := pageDigest(i)
		entries = append(entries, &gen.AuditEntry{Time: time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC), Action: action, Slug: &s, Actor: "root", Version: fmt.Sprintf("1.0.%d", i+1), Before: &before, After: pageDigest(i + 1)})
	}
	head, err := l.Append(key, entries...)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	return path, lines, head
}

func pageSeqs(p *Page) []int {
	var out []int
	for _, e := range p.Entries {
		out = append(out, e.Seq)
	}
	return out
}

func samePageSeqs(a, b []int) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// The page holds the lines exactly as stored, their decoded entries, and
// the head's seq and hash as Append reported them.
func TestReadPageWhole(t *testing.T) {
	path, lines, head := pageLog(t, "a", "b", "-a")
	p, err := ReadPage(path, Query{}, head.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if p.Head != head || p.Next != 0 || len(p.Lines) != 4 || len(p.Entries) != 4 {
		t.Fatalf("got head %v, next %d, %d lines; want head %v, next 0, 4 lines", p.Head, p.Next, len(p.Lines), head)
	}
	for i := range lines {
		if !bytes.Equal(p.Lines[i], lines[i]) {
			t.Errorf("line %d: got %s, want %s", i+1, p.Lines[i], lines[i])
		}
		if p.Entries[i].Seq != i+1 {
			t.Errorf("entry %d has seq %d", i, p.Entries[i].Seq)
		}
	}
	// What a page hands out still verifies: the bytes are the log's own.
	var b bytes.Buffer
	for _, l := range p.Lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	if rep, err := Verify(&b, Options{Key: key.Public().(ed25519.PublicKey)}); err != nil || rep.Head != head {
		t.Errorf("the page does not verify as a log: %v, %v", rep, err)
	}
}

// Following Next from since 0 visits every entry once, in order, and
// the last page says none remain.
func TestReadPageFollowsNext(t *testing.T) {
	path, _, head := pageLog(t, "a", "b", "c", "d", "e", "f")
	var got []int
	since, pages := 0, 0
	for {
		p, err := ReadPage(path, Query{Since: since, Limit: 3}, head.Seq)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		got = append(got, pageSeqs(p)...)
		if p.Head != head {
			t.Fatalf("page %d: head %v, want %v", pages, p.Head, head)
		}
		if p.Next == 0 {
			break
		}
		if p.Next != p.Entries[len(p.Entries)-1].Seq {
			t.Fatalf("page %d: next %d is not its last seq", pages, p.Next)
		}
		since = p.Next
	}
	if !samePageSeqs(got, []int{1, 2, 3, 4, 5, 6, 7}) || pages != 3 {
		t.Errorf("visited %v in %d pages, want 1..7 in 3", got, pages)
	}
}

// Slug and action filters keep only matching entries; Next is 0 when the
// page is full but nothing after it matches.
func TestReadPageFilters(t *testing.T) {
	path, _, head := pageLog(t, "a", "b", "a", "-a", "b", "c")
	for _, c := range []struct {
		q    Query
		want []int
		next int
	}{
		{Query{Slug: "a"}, []int{2, 4, 5}, 0},
		{Query{Slug: "a", Limit: 2}, []int{2, 4}, 4},
		{Query{Slug: "a", Since: 4}, []int{5}, 0},
		{Query{Action: "remove"}, []int{5}, 0},
		{Query{Action: "start"}, []int{1}, 0},
		{Query{Action: "upsert", Slug: "b"}, []int{3, 6}, 0},
		{Query{Slug: "c", Limit: 1}, []int{7}, 0},
		{Query{Slug: "b", Limit: 2}, []int{3, 6}, 0},
		{Query{Slug: "nope"}, nil, 0},
		{Query{Action: "sign"}, nil, 0},
	} {
		p, err := ReadPage(path, c.q, head.Seq)
		if err != nil {
			t.Fatal(err)
		}
		if !samePageSeqs(pageSeqs(p), c.want) || p.Next != c.next || p.Head != head {
			t.Errorf("%+v: got %v next %d head %v, want %v next %d head %v", c.q, pageSeqs(p), p.Next, p.Head, c.want, c.next, head)
		}
	}
}

// Nothing after upTo is read: not the entries, and not a torn line an
// interrupted write left there. The head is the entry upTo, also when
// since is past it.
func TestReadPageStopsAtUpTo(t *testing.T) {
	path, lines, _ := pageLog(t, "a", "b", "c")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":5,"ti`)
	f.Close()
	want := Head{Seq: 2, Hash: HashLine(lines[1])}
	for _, since := range []int{0, 1, 2, 9} {
		p, err := ReadPage(path, Query{Since: since}, 2)
		if err != nil {
			t.Fatal(err)
		}
		wantSeqs := []int{1, 2}[min(since, 2):]
		if !samePageSeqs(pageSeqs(p), wantSeqs) || p.Head != want || p.Next != 0 {
			t.Errorf("since %d: got %v head %v next %d, want %v head %v next 0", since, pageSeqs(p), p.Head, p.Next, wantSeqs, want)
		}
	}
}

// With nothing served the file is not opened; a missing file when
// entries are served, or one shorter than the head, is an error.
func TestReadPageMissingOrShort(t *testing.T) {
	dir := t.TempDir()
	p, err := ReadPage(filepath.Join(dir, "none.jsonl"), Query{}, 0)
	if err != nil || len(p.Lines) != 0 || p.Head != (Head{}) || p.Next != 0 {
		t.Errorf("empty log: got %+v, %v", p, err)
	}
	if _, err := ReadPage(filepath.Join(dir, "none.jsonl"), Query{}, 3); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing log with head 3: %v", err)
	}
	path, _, head := pageLog(t, "a")
	if _, err := ReadPage(path, Query{}, head.Seq+1); err == nil || !strings.Contains(err.Error(), "ends at seq 2, before seq 3") {
		t.Errorf("short log: %v", err)
	}
}

// A line that is not an entry, or holds another seq than its place,
// is an error naming the seq; one before since is not even decoded.
func TestReadPageBadLine(t *testing.T) {
	path, lines, _ := pageLog(t, "a", "b")
	write := func(ls ...[]byte) {
		t.Helper()
		if err := os.WriteFile(path, append(bytes.Join(ls, []byte("\n")), '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(lines[0], []byte(`{"seq":2,"nonsense":true}`), lines[2])
	if _, err := ReadPage(path, Query{}, 3); err == nil || !strings.Contains(err.Error(), "seq 2: not an audit entry") {
		t.Errorf("undecodable line: %v", err)
	}
	if p, err := ReadPage(path, Query{Since: 2}, 3); err != nil || !samePageSeqs(pageSeqs(p), []int{3}) {
		t.Errorf("undecodable line before since: %v, %v", p, err)
	}
	write(lines[0], lines[2], lines[1])
	if _, err := ReadPage(path, Query{}, 3); err == nil || !strings.Contains(err.Error(), "seq 2: the line holds seq 3") {
		t.Errorf("reordered lines: %v", err)
	}
	write(lines[0], bytes.Repeat([]byte("x"), MaxLine+10), lines[2])
	if _, err := ReadPage(path, Query{}, 3); err == nil || !strings.Contains(err.Error(), "seq 2: the line is longer") {
		t.Errorf("overlong line: %v", err)
	}
}

// A limit of 0 means DefaultPage, and no limit exceeds MaxPage.
func TestReadPageLimitBounds(t *testing.T) {
	slugs := make([]string, MaxPage+5)
	for i := range slugs {
		slugs[i] = "s"
	}
	path, _, head := pageLog(t, slugs...)
	for _, c := range []struct{ limit, want int }{{0, DefaultPage}, {-3, DefaultPage}, {MaxPage * 2, MaxPage}} {
		p, err := ReadPage(path, Query{Limit: c.limit}, head.Seq)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Lines) != c.want || p.Next != c.want {
			t.Errorf("limit %d: %d entries, next %d; want %d of each", c.limit, len(p.Lines), p.Next, c.want)
		}
	}
}
