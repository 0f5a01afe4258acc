package auditlog

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
)

func testKey(t testing.TB, seed byte) ed25519.PrivateKey {
	t.Helper()
	k, err := curatorkey.ParseSeed(strings.Repeat(fmt.Sprintf("%02x", seed), 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func hexSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// buildLog writes a log of n entries (a start and n-1 upserts) signed with
// key (unsigned when nil) and returns its path.
func buildLog(t testing.TB, n int, key ed25519.PrivateKey) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registry.json.audit.jsonl")
	l := Open(path, &Report{})
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	var batch []*gen.AuditEntry
	for i := 1; i <= n; i++ {
		e := &gen.AuditEntry{Time: at.Add(time.Duration(i) * time.Minute).UTC().Truncate(time.Second), Action: gen.AuditActionUpsert,
			Actor: "ada", Version: fmt.Sprintf("1.0.%d", i), After: hexSum(fmt.Sprint(i))}
		if i == 1 {
			e.Action, e.Actor = gen.AuditActionStart, "cli"
		} else {
			before, slug := hexSum(fmt.Sprint(i-1)), fmt.Sprintf("topic-%d", i%7)
			e.Before, e.Slug = &before, &slug
		}
		batch = append(batch, e)
		if len(batch) == 500 || i == n {
			if _, err := l.Append(key, batch...); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	return path
}

func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(data, []byte("\n"))[:bytes.Count(data, []byte("\n"))]
}

func write(t *testing.T, path string, ls [][]byte) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Join(ls, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAppendVerifyRoundTrip(t *testing.T) {
	k := testKey(t, 1)
	path := buildLog(t, 12, k)
	rep, err := Read(path, Options{Key: curatorkey.Public(k), Mark: 5})
	if err != nil {
		t.Fatal(err)
	}
	ls := lines(t, path)
	if rep.Entries != 12 || rep.Head.Seq != 12 || rep.Head.Hash != HashLine(bytes.TrimSuffix(ls[11], []byte("\n"))) || rep.FirstSigned != 1 || rep.Torn != 0 {
		t.Fatalf("report %+v", rep)
	}
	var upTo5 int64
	for _, l := range ls[:5] {
		upTo5 += int64(len(l))
	}
	if rep.Mark == nil || rep.Mark.Seq != 5 || rep.Mark.End != upTo5 || rep.Mark.After != hexSum("5") {
		t.Errorf("mark %+v", rep.Mark)
	}
	// An unsigned log verifies without a key; a signed one needs it.
	if rep, err := Read(buildLog(t, 3, nil), Options{}); err != nil || rep.Signed() {
		t.Errorf("unsigned: %+v %v", rep, err)
	}
	if _, err := Read(path, Options{}); err == nil || !strings.Contains(err.Error(), "no key") {
		t.Errorf("signed, no key: %v", err)
	}
	// Open carries on where the log ends.
	l := Open(path, rep)
	before := rep.Last.After
	if h, err := l.Append(k, &gen.AuditEntry{Time: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC), Action: gen.AuditActionRemove, Actor: "ada", Version: "1.0.13", Before: &before, After: hexSum("13")}); err != nil || h.Seq != 13 {
		t.Fatalf("append: %v %v", h, err)
	}
	if rep, err := Read(path, Options{Key: curatorkey.Public(k)}); err != nil || rep.Entries != 13 {
		t.Fatalf("after append: %+v %v", rep, err)
	}
}

// Each way of tampering with a log is refused at the seq where it shows.
func TestTamperingNamesTheSeq(t *testing.T) {
	k, other := testKey(t, 1), testKey(t, 2)
	path := buildLog(t, 10, k)
	orig := lines(t, path)
	foreign := func() []byte { // entry 11, well formed and linked, signed by another key
		p := buildLog(t, 10, k)
		rep, _ := Read(p, Options{Key: curatorkey.Public(k)})
		before := rep.Last.After
		Open(p, rep).Append(other, &gen.AuditEntry{Time: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC), Action: gen.AuditActionUpsert, Actor: "mallory", Version: "9.9.9", Before: &before, After: hexSum("x")})
		return lines(t, p)[10]
	}()
	for _, c := range []struct {
		name string
		edit func() [][]byte
		seq  int
		says string
	}{
		{"one byte of a value", func() [][]byte {
			ls := clone(orig)
			ls[3] = bytes.Replace(ls[3], []byte(`"ada"`), []byte(`"eve"`), 1)
			return ls
		}, 4, "signature does not verify"},
		{"spacing", func() [][]byte {
			ls := clone(orig)
			ls[6] = bytes.Replace(ls[6], []byte(`,"time"`), []byte(`, "time"`), 1)
			return ls
		}, 7, "not in the form"},
		{"an entry deleted", func() [][]byte { ls := clone(orig); return append(ls[:4], ls[5:]...) }, 5, "holds seq 6"},
		{"two swapped", func() [][]byte { ls := clone(orig); ls[2], ls[3] = ls[3], ls[2]; return ls }, 3, "holds seq 4"},
		{"the start cut off", func() [][]byte { return clone(orig)[1:] }, 1, "holds seq 2"},
		{"signed by another key", func() [][]byte { return append(clone(orig), foreign) }, 11, "signature does not verify"},
		{"an unsigned entry after signed ones", func() [][]byte {
			ls := clone(orig)
			e, _ := gen.DecodeAuditEntry(bytes.TrimSuffix(ls[9], []byte("\n")))
			next := &gen.AuditEntry{Seq: 11, Time: e.Time, Action: gen.AuditActionUpsert, Actor: "eve", Version: "2", Before: &e.After, After: hexSum("y")}
			prev := HashLine(bytes.TrimSuffix(ls[9], []byte("\n")))
			next.Prev = &prev
			return append(ls, append(Encode(next), '\n'))
		}, 11, "unsigned, after signed entries"},
		{"garbage", func() [][]byte { ls := clone(orig); ls[8] = []byte("not json\n"); return ls }, 9, "not an audit entry"},
	} {
		t.Run(c.name, func(t *testing.T) {
			write(t, path, c.edit())
			_, err := Read(path, Options{Key: curatorkey.Public(k)})
			var p *Problem
			if !errors.As(err, &p) || p.Seq != c.seq || !strings.Contains(p.Reason, c.says) {
				t.Errorf("got %v, want seq %d: …%s…", err, c.seq, c.says)
			}
		})
	}
	// Cutting whole entries off the tail leaves a valid shorter log: only
	// the head a signature covers shows it (Match).
	write(t, path, clone(orig)[:8])
	rep, err := Read(path, Options{Key: curatorkey.Public(k), Mark: 10})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Match(rep, hexSum("10"), &Head{Seq: 10, Hash: HashLine(bytes.TrimSuffix(orig[9], []byte("\n")))})
	var p *Problem
	if !errors.As(err, &p) || p.Seq != 9 || !strings.Contains(p.Reason, "tail was cut") {
		t.Errorf("truncated tail: %v", err)
	}
}

func clone(ls [][]byte) [][]byte {
	out := make([][]byte, len(ls))
	for i, l := range ls {
		out[i] = bytes.Clone(l)
	}
	return out
}

func TestMatch(t *testing.T) {
	k := testKey(t, 1)
	path := buildLog(t, 6, k)
	ls := lines(t, path)
	h4 := Head{4, HashLine(bytes.TrimSuffix(ls[3], []byte("\n")))}
	rep, err := Read(path, Options{Key: curatorkey.Public(k), Mark: 4})
	if err != nil {
		t.Fatal(err)
	}
	// Two upserts after the signed head: more than a crash leaves, so an
	// older registry was put back.
	if _, err := Match(rep, hexSum("4"), &h4); err == nil || !strings.Contains(err.Error(), "put back") {
		t.Fatalf("two changes past the head: %v", err)
	}
	// One: an interrupted change.
	if err := Cut(path, int64(len(ls[0])+len(ls[1])+len(ls[2])+len(ls[3])+len(ls[4]))); err != nil {
		t.Fatal(err)
	}
	if rep, err = Read(path, Options{Key: curatorkey.Public(k), Mark: 4}); err != nil {
		t.Fatal(err)
	}
	fit, err := Match(rep, hexSum("4"), &h4)
	if err != nil || fit.Pending != 1 || fit.CutAt != int64(len(ls[0])+len(ls[1])+len(ls[2])+len(ls[3])) {
		t.Fatalf("fit %+v %v", fit, err)
	}
	if err := Cut(path, fit.CutAt); err != nil {
		t.Fatal(err)
	}
	if rep, err = Read(path, Options{Key: curatorkey.Public(k), Mark: 4}); err != nil || rep.Head != h4 {
		t.Fatalf("after the cut: %+v %v", rep, err)
	}
	// The signature names another hash at that seq: rewritten.
	if _, err := Match(rep, hexSum("4"), &Head{4, hexSum("other")}); err == nil || !strings.Contains(err.Error(), "rewritten") {
		t.Errorf("other hash: %v", err)
	}
	// The head records another registry.
	if _, err := Match(rep, hexSum("5"), &h4); err == nil || !strings.Contains(err.Error(), "records the registry") {
		t.Errorf("other registry: %v", err)
	}
	// A covered head and no log at all.
	if _, err := Match(&Report{}, hexSum("4"), &h4); err == nil || !strings.Contains(err.Error(), "empty or missing") {
		t.Errorf("no log: %v", err)
	}
	// No covered head: recorded or not.
	if fit, _ := Match(rep, hexSum("4"), nil); fit.Unrecorded {
		t.Error("the last entry's registry is reported unrecorded")
	}
	if fit, _ := Match(rep, hexSum("hand edit"), nil); !fit.Unrecorded {
		t.Error("a hand edit is reported recorded")
	}
	// No covered head, and the last entry starts from this registry and
	// leads elsewhere: an interrupted change by a server without the key.
	if fit, _ := Match(rep, hexSum("3"), nil); fit.Unrecorded || fit.Pending != 1 || fit.CutAt != rep.LastStart {
		t.Errorf("unsigned interrupted change: %+v", fit)
	}
}

func TestTornTailIsNotAnEntry(t *testing.T) {
	path := buildLog(t, 3, nil)
	whole, _ := os.ReadFile(path)
	os.WriteFile(path, append(bytes.Clone(whole), `{"seq":4,"ti`...), 0o600)
	rep, err := Read(path, Options{})
	if err != nil || rep.Entries != 3 || rep.Torn != 12 || rep.Size != int64(len(whole)) {
		t.Fatalf("%+v %v", rep, err)
	}
}

// A write that fails part way (a full disk) is cut back at once, so the
// next entry is not glued onto a fragment, and the Log is unchanged.
func TestFailedAppendLeavesNoFragment(t *testing.T) {
	path := buildLog(t, 2, nil)
	rep, _ := Read(path, Options{})
	l := Open(path, rep)
	whole, _ := os.ReadFile(path)
	writeLog = func(w io.Writer, b []byte) (int, error) {
		n, _ := w.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	before := rep.Last.After
	e := func() *gen.AuditEntry {
		return &gen.AuditEntry{Time: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC), Action: gen.AuditActionUpsert, Actor: "a", Version: "3", Before: &before, After: hexSum("3")}
	}
	_, err := l.Append(nil, e())
	writeLog = func(w io.Writer, b []byte) (int, error) { return w.Write(b) }
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("a full disk: %v", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, whole) || l.Head() != rep.Head {
		t.Fatalf("the failed append left %q, head %v", now[len(whole):], l.Head())
	}
	if h, err := l.Append(nil, e()); err != nil || h.Seq != 3 {
		t.Fatalf("the next append: %v %v", h, err)
	}
	// Checkpoint takes an append back.
	undo := l.Checkpoint()
	after := l.Last().After
	l.Append(nil, &gen.AuditEntry{Time: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC), Action: gen.AuditActionRemove, Actor: "a", Version: "4", Before: &after, After: hexSum("4")})
	if err := undo(); err != nil || l.Head().Seq != 3 {
		t.Fatalf("undo: %v %v", l.Head(), err)
	}
	if rep, err := Read(path, Options{}); err != nil || rep.Head != l.Head() {
		t.Fatalf("after undo: %+v %v", rep, err)
	}
}

// The format 3gs wrote before: refused with the way out, never skipped.
func TestLegacyFormatIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	os.WriteFile(path, []byte(`{"time":"2026-11-20T10:00:00Z","token":"root","tool":"upsert_category","slug":"go","before_sha256":"`+hexSum("a")+`","after_sha256":"`+hexSum("b")+`","version":"1.0.1"}`+"\n"), 0o600)
	if _, err := Read(path, Options{}); !errors.Is(err, ErrLegacy) || !strings.Contains(err.Error(), "3gs audit migrate") {
		t.Errorf("got %v", err)
	}
}

func TestAppendRefusesUnsignedAfterSigned(t *testing.T) {
	k := testKey(t, 1)
	path := buildLog(t, 2, k)
	rep, _ := Read(path, Options{Key: curatorkey.Public(k)})
	before := rep.Last.After
	if _, err := Open(path, rep).Append(nil, &gen.AuditEntry{Time: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC), Action: gen.AuditActionUpsert, Actor: "a", Version: "3", Before: &before, After: hexSum("3")}); !errors.Is(err, ErrNeedKey) {
		t.Errorf("got %v", err)
	}
}

// A tail that starts after a head the reader holds (a peer's refresh).
func TestVerifyTail(t *testing.T) {
	k := testKey(t, 1)
	path := buildLog(t, 8, k)
	ls := lines(t, path)
	from := Head{5, HashLine(bytes.TrimSuffix(ls[4], []byte("\n")))}
	tail := bytes.Join(ls[5:], nil)
	rep, err := Verify(bytes.NewReader(tail), Options{Key: curatorkey.Public(k), From: 5, FromHash: from.Hash, FromAfter: hexSum("5")})
	if err != nil || rep.Head.Seq != 8 || rep.Entries != 3 {
		t.Fatalf("%+v %v", rep, err)
	}
	if _, err := Verify(bytes.NewReader(tail), Options{Key: curatorkey.Public(k), From: 5, FromHash: hexSum("fork"), FromAfter: hexSum("5")}); err == nil {
		t.Error("a tail that does not follow the held head verified")
	}
}

// BenchmarkVerify10k is the figure the issue asks for: one verification of
// a 10,000-entry signed log, every signature and link.
func BenchmarkVerify10k(b *testing.B) {
	k := testKey(b, 1)
	path := buildLog(b, 10000, k)
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Read(path, Options{Key: curatorkey.Public(k)})
		if err != nil || rep.Entries != 10000 {
			b.Fatal(rep, err)
		}
	}
}
