package tools

import (
	"time"

	"bytes"
	"context"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/frozen"
)

// auditHistory makes, on a signed editable registry, the changes
// upsert a, upsert b, upsert a again, remove b, and returns the handlers,
// the key and the log's lines (seq 1 is the start entry the first change
// writes).
func auditHistory(t *testing.T) (*Handlers, []byte, [][]byte) {
	t.Helper()
	key, _ := curatorkey.Generate()
	h, _ := editable(t, key)
	for _, c := range []struct{ slug, name string }{{"sqlite-a", "A"}, {"sqlite-b", "B"}, {"sqlite-a", "A again"}} {
		if _, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: c.slug, Category: sqlite(c.name)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.RemoveCategory(admin, &gen.RemoveCategoryInput{Slug: "sqlite-b"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(h.node.Editor().AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	return h, key, bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

func auditSeqs(out *gen.GetAuditLogOutput) []int {
	var s []int
	for _, e := range out.Entries {
		s = append(s, e.Seq)
	}
	return s
}

// The tool pages through the log as stored, head first to last, with
// filters; every entry carries the values of its line, and the head is
// the one the registry's signature covers.
func TestGetAuditLogPages(t *testing.T) {
	h, _, lines := auditHistory(t)
	if len(lines) != 5 {
		t.Fatalf("the log has %d lines, want 5", len(lines))
	}
	sig := h.cur.Load().signature
	if sig.Log == nil || sig.Log.Seq != 5 {
		t.Fatalf("the signature covers %v, want seq 5", sig.Log)
	}
	ctx := context.Background()
	var all []gen.AuditEntry
	since, calls := 0, 0
	for {
		out, err := h.GetAuditLog(ctx, &gen.GetAuditLogInput{Since: ptr(since), Limit: ptr(2)})
		if err != nil {
			t.Fatal(err)
		}
		calls++
		if out.Head.Seq != 5 || deref(out.Head.Hash) != sig.Log.Hash {
			t.Fatalf("head %+v, want the signed head %v", out.Head, *sig.Log)
		}
		all = append(all, out.Entries...)
		if out.NextSince == nil {
			break
		}
		since = *out.NextSince
	}
	if calls != 3 || len(all) != 5 {
		t.Fatalf("%d calls gave %d entries, want 3 and 5", calls, len(all))
	}
	for i, e := range all {
		want, err := gen.DecodeAuditEntry(lines[i])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e, *want) {
			t.Errorf("entry %d: got %+v, want %+v", i+1, e, *want)
		}
		if e.Signature == nil {
			t.Errorf("entry %d is not signed", e.Seq)
		}
	}
	for _, c := range []struct {
		in   gen.GetAuditLogInput
		want []int
	}{
		{gen.GetAuditLogInput{Slug: ptr("sqlite-a")}, []int{2, 4}},
		{gen.GetAuditLogInput{Slug: ptr("sqlite-b"), Action: ptr(gen.AuditActionRemove)}, []int{5}},
		{gen.GetAuditLogInput{Action: ptr(gen.AuditActionStart)}, []int{1}},
		{gen.GetAuditLogInput{Action: ptr(gen.AuditActionUpsert), Since: ptr(2)}, []int{3, 4}},
		{gen.GetAuditLogInput{Since: ptr(5)}, nil},
		{gen.GetAuditLogInput{Since: ptr(50)}, nil},
	} {
		out, err := h.GetAuditLog(ctx, &c.in)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(auditSeqs(out), c.want) || out.NextSince != nil {
			t.Errorf("%+v: got %v (next %v), want %v", c.in, auditSeqs(out), out.NextSince, c.want)
		}
	}
}

// An entry appended after the served head (as a change does before it
// writes the registry) is not served until the change completes.
func TestGetAuditLogStopsAtServedHead(t *testing.T) {
	h, key, lines := auditHistory(t)
	pub := curatorkey.Public(key)
	rep, err := auditlog.Read(h.node.Editor().AuditLog, auditlog.Options{Key: pub})
	if err != nil {
		t.Fatal(err)
	}
	before := rep.Last.After
	pending := &gen.AuditEntry{Time: time.Date(2026, 12, 24, 12, 0, 0, 0, time.UTC), Action: gen.AuditActionReload, Actor: "cli", Version: "9.9.9", Before: &before, After: strings.Repeat("0", 64)}
	if _, err := auditlog.Open(h.node.Editor().AuditLog, rep).Append(key, pending); err != nil {
		t.Fatal(err)
	}
	out, err := h.GetAuditLog(context.Background(), &gen.GetAuditLogInput{Since: ptr(3)})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(auditSeqs(out), []int{4, 5}) || out.Head.Seq != 5 || *out.Head.Hash != auditlog.HashLine(lines[4]) {
		t.Errorf("got %v up to %+v; want 4, 5 up to seq 5", auditSeqs(out), out.Head)
	}
	head, pubd, err := h.AuditHead()
	if err != nil || head.Seq != 5 || pubd.Registry.SHA256() != rep.Last.After {
		t.Errorf("AuditHead: %v, %s, %v; want seq 5 and the registry seq 5 produced", head, pubd.Registry.SHA256(), err)
	}
}

// A log rewritten underneath the server is not served: nobody verified
// what it now holds.
func TestGetAuditLogRefusesARewrittenLog(t *testing.T) {
	h, _, lines := auditHistory(t)
	lines[4] = bytes.Replace(lines[4], []byte(`"actor":"root"`), []byte(`"actor":"evil"`), 1)
	if err := os.WriteFile(h.node.Editor().AuditLog, append(bytes.Join(lines, []byte("\n")), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := h.GetAuditLog(context.Background(), &gen.GetAuditLogInput{})
	var te *gen.ToolError
	if err == nil || errors.As(err, &te) || !strings.Contains(err.Error(), "rewritten") {
		t.Errorf("got %v, want an internal error saying the log was rewritten", err)
	}
}

// Without a registry file there is no log: a tool error that says so, with
// an empty result.
func TestGetAuditLogEmbedded(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	_, err := h.GetAuditLog(context.Background(), &gen.GetAuditLogInput{})
	te := toolError(t, err)
	if !strings.Contains(te.Text, "built into 3gs, which has no audit log") {
		t.Errorf("text: %s", te.Text)
	}
	if out := te.Structured.(*gen.GetAuditLogOutput); len(out.Entries) != 0 || out.Head.Seq != 0 {
		t.Errorf("structured: %+v", out)
	}
	if _, err := h.AuditPage(auditlog.Query{}); !errors.Is(err, ErrNoAuditLog) {
		t.Errorf("AuditPage: %v", err)
	}
}

// A registry file nothing changed yet has an empty log: an empty page at
// seq 0, and no file is needed for that.
func TestGetAuditLogEmpty(t *testing.T) {
	h, _ := editable(t, nil)
	out, err := h.GetAuditLog(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Entries) != 0 || out.Head.Seq != 0 || out.Head.Hash != nil || out.NextSince != nil {
		t.Errorf("got %+v", out)
	}
	if text := h.GetAuditLogText(out); !strings.Contains(text, "empty") {
		t.Errorf("text: %s", text)
	}
}

// One line per entry, with the action, slug, actor and signing, and how
// to go on.
func TestGetAuditLogText(t *testing.T) {
	h, _, _ := auditHistory(t)
	out, err := h.GetAuditLog(context.Background(), &gen.GetAuditLogInput{Limit: ptr(4)})
	if err != nil {
		t.Fatal(err)
	}
	text := h.GetAuditLogText(out)
	lines := strings.Split(text, "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "Audit log: 4 entries, seq 1 to 4 (the log is served up to seq 5,") {
		t.Fatalf("text:\n%s", text)
	}
	for i, want := range []string{"- seq 1, ", "start by cli", "- seq 2, ", "upsert sqlite-a by root", "signed"} {
		if !strings.Contains(lines[1+i/2], want) {
			t.Errorf("line %d lacks %q:\n%s", 1+i/2, want, text)
		}
	}
	if !strings.Contains(lines[5], "since 4") {
		t.Errorf("last line: %s", lines[5])
	}
	out, _ = h.GetAuditLog(context.Background(), &gen.GetAuditLogInput{Slug: ptr("nothing-here")})
	if text := h.GetAuditLogText(out); !strings.HasPrefix(text, "No entries match, up to seq 5") {
		t.Errorf("no match: %s", text)
	}
}

// The action filter must offer exactly the actions an entry may have: the
// input schema lists them again, since a reference cannot reach one
// property of another schema.
func TestGetAuditLogActionFilterFollowsTheEntry(t *testing.T) {
	if filter, entry := gen.EnumGetAuditLogInputAction(), gen.EnumAuditEntryAction(); !slices.Equal(filter, entry) {
		t.Errorf("the action filter offers %v, the entry has %v", filter, entry)
	}
}
