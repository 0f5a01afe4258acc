package tools

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

func curatorKey(t *testing.T) []byte {
	t.Helper()
	k, err := pkarr.ParseSeed(strings.Repeat("c3", 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
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
// server that starts on the result finds everything in order.
func TestSignedChangeCoversTheLogHead(t *testing.T) {
	key := curatorKey(t)
	h, path := editable(t, key)
	h.edit.Validity = 72 * time.Hour
	if _, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: sqlite("Learning SQLite")}); err != nil {
		t.Fatal(err)
	}
	v := signedHead(t, path)
	now := h.edit.Now()
	if v.Log == nil || v.Log.Seq != 2 || !v.Expires.Equal(now.Add(72*time.Hour)) {
		t.Fatalf("signature covers %+v, expires %v", v.Log, v.Expires)
	}
	rep, err := auditlog.Read(path+".audit.jsonl", auditlog.Options{Key: pkarr.Public(key), Mark: 2})
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
	if _, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: sqlite("Learning SQLite")}); err != nil {
		t.Fatal(err)
	}
	logPath := path + ".audit.jsonl"
	signed, _ := os.ReadFile(logPath)
	// What the crashed change wrote: its entry, and nothing else.
	rep, _ := auditlog.Read(logPath, auditlog.Options{Key: pkarr.Public(key)})
	before := rep.Last.After
	if _, err := auditlog.Open(logPath, rep).Append(key, &gen.Auditentry{Time: "2026-12-24T12:00:01Z", Action: gen.AuditentryActionRemove, Actor: "root", Version: "9.9.9", Before: &before, After: strings.Repeat("ab", 32)}); err != nil {
		t.Fatal(err)
	}
	h2, _ := reopen(t, path, key)
	notes, err := h2.OpenAuditLog()
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "1 entries after seq 2") {
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
	for _, name := range []string{"Learning SQLite", "SQLite, learned", "SQLite again"} {
		if _, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: sqlite(name)}); err != nil {
			t.Fatal(err)
		}
	}
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
	if _, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: sqlite("Learning SQLite")}); err != nil {
		t.Fatal(err)
	}
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

// A registry changed outside the log and loaded with reload_registry is
// recorded as a reload by whoever called it, and, with the key, signed
// again so that the signature covers the new head.
func TestReloadRecordsAChangeMadeOutsideTheLog(t *testing.T) {
	key := curatorKey(t)
	h, path := editable(t, key)
	if _, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: sqlite("Learning SQLite")}); err != nil {
		t.Fatal(err)
	}
	// A hand edit, signed with an old-form signature (no log head).
	data, _ := os.ReadFile(path)
	data = bytes.Replace(data, []byte(`"Learning SQLite"`), []byte(`"Learning SQLite by hand"`), 1)
	data = bytes.Replace(data, []byte(`"version": "1.1.1"`), []byte(`"version": "1.2.0"`), 1)
	os.WriteFile(path, data, 0o644)
	os.WriteFile(path+signature.Suffix, signature.SignWith(data, key, time.Now(), signature.Options{}), 0o644)
	out, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{})
	if err != nil || !out.Reloaded || !out.Verified {
		t.Fatalf("reload: %+v %v", out, err)
	}
	rep, err := auditlog.Read(path+".audit.jsonl", auditlog.Options{Key: pkarr.Public(key)})
	if err != nil || rep.Entries != 3 || rep.Last.Action != gen.AuditentryActionReload || rep.Last.Actor != "root" || rep.Last.Version != "1.2.0" {
		t.Fatalf("log %+v %v", rep.Last, err)
	}
	if v := signedHead(t, path); v.Log == nil || *v.Log != rep.Head || v.Expires.IsZero() {
		t.Errorf("the signature covers %+v, the log ends at %v", v.Log, rep.Head)
	}
	// Reloading the same file again records nothing.
	if _, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{}); err != nil {
		t.Fatal(err)
	}
	if rep2, _ := auditlog.Read(path+".audit.jsonl", auditlog.Options{Key: pkarr.Public(key)}); rep2.Entries != 3 {
		t.Errorf("a reload of the same file added %d entries", rep2.Entries-3)
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
	signedAt := h.edit.Now().Add(-40 * 24 * time.Hour)
	os.WriteFile(path+signature.Suffix, signature.SignWith(data, key, signedAt, signature.Options{Expires: signedAt.Add(30 * 24 * time.Hour)}), 0o644)
	_, err := h.ReloadRegistry(context.Background(), &gen.ReloadRegistryInput{})
	if err == nil || !strings.Contains(err.Error(), "expired on 2026-12-14T12:00:00Z") {
		t.Fatalf("got %v", err)
	}
	h.edit.AllowExpired = true
	if out, err := h.ReloadRegistry(context.Background(), &gen.ReloadRegistryInput{}); err != nil || !out.Reloaded {
		t.Fatalf("with expired allowed: %v", err)
	}
}

// A server holding the key signs again when less than half the validity
// is left, covering the same log head; before that it leaves the
// signature alone.
func TestRenewBeforeExpiry(t *testing.T) {
	key := curatorKey(t)
	h, path := editable(t, key)
	h.edit.Validity = 10 * 24 * time.Hour
	if _, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: sqlite("Learning SQLite")}); err != nil {
		t.Fatal(err)
	}
	first := signedHead(t, path)
	start := h.edit.Now()
	for _, c := range []struct {
		after time.Duration
		signs bool
	}{{4 * 24 * time.Hour, false}, {6 * 24 * time.Hour, true}, {7 * 24 * time.Hour, false}} {
		at := start.Add(c.after)
		h.edit.Now = func() time.Time { return at }
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
