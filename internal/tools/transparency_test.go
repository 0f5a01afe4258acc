package tools

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

func curatorKey(t *testing.T) []byte {
	t.Helper()
	k, err := curatorkey.ParseSeed(strings.Repeat("c3", 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// signLikeCLI signs data, just written to path, as 3gs sign does: the
// audit log records it (a sign entry, or a start entry for a new log)
// unless its last entry already does, and the signature covers the head.
func signLikeCLI(t *testing.T, path string, data []byte, key ed25519.PrivateKey) {
	t.Helper()
	logPath := path + ".audit.jsonl"
	now := time.Now()
	rep, err := auditlog.Read(logPath, auditlog.Options{Key: curatorkey.Public(key)})
	if err != nil {
		// Not this key's log: sign as someone without the curator's key
		// would, who cannot extend it.
		os.WriteFile(path+signature.Suffix, signature.Sign(data, key, now), 0o644)
		return
	}
	reg, err := registry.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	l := auditlog.Open(logPath, rep)
	head := l.Head()
	switch last := l.Last(); {
	case last == nil:
		head, err = l.Append(key, &gen.AuditEntry{Time: time.Date(2026, 12, 24, 12, 0, 0, 0, time.UTC), Action: gen.AuditActionStart, Actor: Actor, Version: reg.Version(), After: reg.SHA256()})
	case last.After != reg.SHA256():
		before := last.After
		head, err = l.Append(key, &gen.AuditEntry{Time: time.Date(2026, 12, 24, 12, 0, 0, 0, time.UTC), Action: gen.AuditActionSign, Actor: Actor, Version: reg.Version(), Before: &before, After: reg.SHA256()})
	}
	if err != nil {
		t.Fatal(err)
	}
	// Valid well past the editor's clock in these tests (2026-12-24).
	os.WriteFile(path+signature.Suffix, signature.SignWith(data, key, now, signature.Options{Expires: now.Add(3 * 365 * 24 * time.Hour), Log: &head}), 0o644)
}

// signedHead reads the registry at path and its signature, and returns
// what the signature says.
func signedHead(t *testing.T, path string) *signature.Verified {
	t.Helper()
	data, doc, err := signature.ReadSigned(path, registry.MaxSize)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.Verify(data, doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A change by a server with the curator key starts the log, records the
// change, and signs the registry with an expiry and the new head; a
// server that starts on the result finds everything in order. The expiry
// keeps the span the curator chose (72 hours), not the server's own
// validity (its default, 30 days).
func TestSignedChangeCoversTheLogHead(t *testing.T) {
	key := curatorKey(t)
	h, path := editableFor(t, key, 72*time.Hour)
	upsertSQLite(t, h, "Learning SQLite")
	v := signedHead(t, path)
	now := h.node.Editor().Now()
	if v.Log == nil || v.Log.Seq != 2 || !v.Expires.Equal(now.Add(72*time.Hour)) {
		t.Fatalf("signature covers %+v, expires %v", v.Log, v.Expires)
	}
	rep, err := auditlog.Read(path+".audit.jsonl", auditlog.Options{Key: curatorkey.Public(key), Mark: 2})
	if err != nil || rep.Head != *v.Log || rep.FirstSigned != 1 {
		t.Fatalf("log %+v %v", rep, err)
	}
	h2, _ := reopen(t, path, key)
	if notes, err := h2.OpenAuditLog(); err != nil || len(notes) != 0 {
		t.Fatalf("a restart: %q %v", notes, err)
	}
	if _, err := h2.RemoveCategory(admin, &gen.RemoveCategoryInput{Slug: "sqlite-learning"}); err != nil {
		t.Fatal(err)
	}
	if v := signedHead(t, path); v.Log.Seq != 3 {
		t.Errorf("after a second change the signature covers %+v", v.Log)
	}
}

// An entry written just before a crash, whose registry write never
// happened, follows the signed head; the next start cuts it and says so.
func TestStartCutsAnEntryTheRegistryNeverTook(t *testing.T) {
	key := curatorKey(t)
	h, path := editable(t, key)
	upsertSQLite(t, h, "Learning SQLite")
	logPath := path + ".audit.jsonl"
	signed, _ := os.ReadFile(logPath)
	// What the crashed change wrote: its entry, and nothing else.
	rep, _ := auditlog.Read(logPath, auditlog.Options{Key: curatorkey.Public(key)})
	before := rep.Last.After
	if _, err := auditlog.Open(logPath, rep).Append(key, &gen.AuditEntry{Time: time.Date(2026, 12, 24, 12, 0, 1, 0, time.UTC), Action: gen.AuditActionRemove, Actor: "root", Version: "9.9.9", Before: &before, After: strings.Repeat("ab", 32)}); err != nil {
		t.Fatal(err)
	}
	h2, _ := reopen(t, path, key)
	notes, err := h2.OpenAuditLog()
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "1 entry after seq 2") {
		t.Fatalf("open: %q %v", notes, err)
	}
	if now, _ := os.ReadFile(logPath); !bytes.Equal(now, signed) {
		t.Error("the entry after the signed head is still there")
	}
}

// A log rewritten after the registry was signed, or cut short of the
// signed head, stops the server, naming the seq.
func TestStartRefusesARewrittenLog(t *testing.T) {
	key := curatorKey(t)
	h, path := editable(t, key)
	upsertSQLite(t, h, "Learning SQLite", "SQLite, learned", "SQLite again")
	logPath := path + ".audit.jsonl"
	whole, _ := os.ReadFile(logPath)
	ls := bytes.SplitAfter(whole, []byte("\n"))
	for name, c := range map[string]struct {
		log  []byte
		says string
	}{
		"an actor edited": {bytes.Replace(whole, []byte(`"actor":"root"`), []byte(`"actor":"rooT"`), 1), "seq 2: the signature does not verify"},
		"the tail cut":    {bytes.Join(ls[:3], nil), "seq 4: missing"},
		"the log deleted": {nil, "empty or missing"},
	} {
		t.Run(name, func(t *testing.T) {
			if c.log == nil {
				os.Remove(logPath)
			} else {
				os.WriteFile(logPath, c.log, 0o600)
			}
			defer os.WriteFile(logPath, whole, 0o600)
			h2, _ := reopen(t, path, key)
			_, err := h2.OpenAuditLog()
			if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), logPath) {
				t.Errorf("got %v, want …%s…", err, c.says)
			}
		})
	}
}

// Without the curator key, a server refuses to edit a registry whose log
// is signed: an unsigned entry would break it.
func TestNoKeyNoEditOfASignedLog(t *testing.T) {
	key := curatorKey(t)
	h, path := editable(t, key)
	upsertSQLite(t, h, "Learning SQLite")
	h2, _ := reopen(t, path)
	before, _ := os.ReadFile(path)
	_, err := h2.RemoveCategory(admin, &gen.RemoveCategoryInput{Slug: "sqlite-learning"})
	if err == nil || !strings.Contains(err.Error(), "no curator key") && !strings.Contains(err.Error(), "does not hold it") {
		t.Fatalf("got %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the registry changed")
	}
}

// A registry changed outside the log (a hand edit of an unsigned
// registry) and loaded with reload_registry is recorded as a reload by
// whoever called it.
func TestReloadRecordsAChangeMadeOutsideTheLog(t *testing.T) {
	h, path := editable(t, nil)
	h.node.Editor().AllowUnsigned = true // our registry names a curator key; this copy is not signed
	upsertSQLite(t, h, "Learning SQLite")
	data, _ := os.ReadFile(path)
	data = bytes.Replace(data, []byte(`"Learning SQLite"`), []byte(`"Learning SQLite by hand"`), 1)
	data = bytes.Replace(data, []byte(`"version": "1.1.1"`), []byte(`"version": "1.2.0"`), 1)
	os.WriteFile(path, data, 0o644)
	out, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{})
	if err != nil || !out.Reloaded {
		t.Fatalf("reload: %+v %v", out, err)
	}
	rep, err := auditlog.Read(path+".audit.jsonl", auditlog.Options{})
	if err != nil || rep.Entries != 3 || rep.Last.Action != gen.AuditActionReload || rep.Last.Actor != "root" || rep.Last.Version != "1.2.0" {
		t.Fatalf("log %+v %v", rep.Last, err)
	}
	// Reloading the same file again records nothing.
	if _, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{}); err != nil {
		t.Fatal(err)
	}
	if rep2, _ := auditlog.Read(path+".audit.jsonl", auditlog.Options{}); rep2.Entries != 3 {
		t.Errorf("a reload of the same file added %d entries", rep2.Entries-3)
	}
}

// A registry whose log is signed, put back with a signature that names no
// log head (older than the log), is refused, at start and by reload; one
// the curator signed with 3gs sign loads, with nothing more recorded.
func TestSignedLogNeedsACoveredHead(t *testing.T) {
	key := curatorKey(t)
	h, path := editable(t, key)
	upsertSQLite(t, h, "Learning SQLite")
	data, _ := os.ReadFile(path)
	data = bytes.Replace(data, []byte(`"version": "1.1.1"`), []byte(`"version": "1.2.0"`), 1)
	os.WriteFile(path, data, 0o644)
	os.WriteFile(path+signature.Suffix, signature.Sign(data, key, time.Now()), 0o644)
	_, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{})
	if err == nil || !strings.Contains(err.Error(), "names no log head") {
		t.Fatalf("reload: %v", err)
	}
	if _, err := reopenErr(t, path, key); err == nil || !strings.Contains(err.Error(), "names no log head") {
		t.Fatalf("start: %v", err)
	}
	signLikeCLI(t, path, data, key)
	if out, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{}); err != nil || !out.Verified {
		t.Fatalf("reload after 3gs sign: %v", err)
	}
	if rep, _ := auditlog.Read(path+".audit.jsonl", auditlog.Options{Key: curatorkey.Public(key)}); rep.Entries != 3 || rep.Last.Action != gen.AuditActionSign {
		t.Errorf("log after the reload: %d entries, last %s", rep.Entries, rep.Last.Action)
	}
}

// reopenErr starts a server on path, as reopen, and returns what opening
// its audit log says.
func reopenErr(t *testing.T, path string, key []byte) (LogNotes, error) {
	t.Helper()
	h, _ := reopen(t, path, key)
	return h.OpenAuditLog()
}

// savePair keeps the registry at path and its signature as they are now;
// the function it returns puts them back.
func savePair(t *testing.T, path string) func() {
	t.Helper()
	reg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := os.ReadFile(path + signature.Suffix)
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if os.WriteFile(path, reg, 0o644) != nil || os.WriteFile(path+signature.Suffix, sig, 0o644) != nil {
			t.Fatal("cannot put the registry and signature back")
		}
	}
}

// Putting back the registry and signature of two changes ago leaves more
// entries after the signed head than a crash can: refused, and the log is
// left whole.
func TestStartRefusesARegistryPutBack(t *testing.T) {
	key := curatorKey(t)
	h, path := editable(t, key)
	upsertSQLite(t, h, "Learning SQLite")
	putBack := savePair(t, path)
	upsertSQLite(t, h, "SQLite, learned", "SQLite again")
	logBefore, _ := os.ReadFile(path + ".audit.jsonl")
	putBack()
	_, err := reopenErr(t, path, key)
	if err == nil || !strings.Contains(err.Error(), "seq 3") || !strings.Contains(err.Error(), "put back") {
		t.Fatalf("got %v", err)
	}
	if now, _ := os.ReadFile(path + ".audit.jsonl"); !bytes.Equal(now, logBefore) {
		t.Error("the refused start changed the log")
	}
}

// An expired signature is refused by reload_registry, naming the date,
// unless expired registries are allowed.
func TestReloadRefusesAnExpiredRegistry(t *testing.T) {
	key := curatorKey(t)
	h, path := editable(t, key)
	data, _ := os.ReadFile(path)
	data = bytes.Replace(data, []byte(`"version": "1.1.0"`), []byte(`"version": "1.1.5"`), 1)
	os.WriteFile(path, data, 0o644)
	signedAt := h.node.Editor().Now().Add(-40 * 24 * time.Hour)
	os.WriteFile(path+signature.Suffix, signature.SignWith(data, key, signedAt, signature.Options{Expires: signedAt.Add(30 * 24 * time.Hour)}), 0o644)
	_, err := h.ReloadRegistry(context.Background(), &gen.ReloadRegistryInput{})
	if err == nil || !strings.Contains(err.Error(), "expired on 2026-12-14T12:00:00Z") {
		t.Fatalf("got %v", err)
	}
	h.node.Editor().AllowExpired = true
	if out, err := h.ReloadRegistry(context.Background(), &gen.ReloadRegistryInput{}); err != nil || !out.Reloaded {
		t.Fatalf("with expired allowed: %v", err)
	}
}

// A server holding the key signs again when less than half the validity
// the curator chose (ten days) is left, for that span, covering the same
// log head; before that it leaves the signature alone. Its own validity
// (one day here) plays no part.
func TestRenewBeforeExpiry(t *testing.T) {
	key := curatorKey(t)
	h, path := editableFor(t, key, 10*24*time.Hour)
	h.node.Editor().Validity = 24 * time.Hour
	upsertSQLite(t, h, "Learning SQLite")
	first := signedHead(t, path)
	start := h.node.Editor().Now()
	for _, c := range []struct {
		after time.Duration
		signs bool
	}{{4 * 24 * time.Hour, false}, {6 * 24 * time.Hour, true}, {7 * 24 * time.Hour, false}} {
		at := start.Add(c.after)
		h.node.Editor().Now = func() time.Time { return at }
		signed, err := h.Renew()
		if err != nil || signed != c.signs {
			t.Fatalf("after %v: signed %v, %v", c.after, signed, err)
		}
	}
	v := signedHead(t, path)
	if *v.Log != *first.Log || !v.Expires.Equal(start.Add(16*24*time.Hour)) {
		t.Errorf("renewed: head %+v (was %+v), expires %v", v.Log, first.Log, v.Expires)
	}
	if p, _ := h.GetProvenance(context.Background(), nil); !p.Verified {
		t.Error("the renewed signature is not served as verified")
	}
}

// reload_registry refuses a file whose signature covers an earlier log
// head than the registry served, even under the same version: the pair
// from before the last change, put back.
func TestReloadRefusesAnEarlierHead(t *testing.T) {
	key := curatorKey(t)
	h, path := editable(t, key)
	upsertSQLite(t, h, "Learning SQLite")
	putBack := savePair(t, path)
	upsertSQLite(t, h, "SQLite, learned")
	putBack()
	_, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{})
	if err == nil || !strings.Contains(err.Error(), "Refusing a rollback") || !strings.Contains(err.Error(), "seq 2, before seq 3") {
		t.Fatalf("got %v", err)
	}
}
