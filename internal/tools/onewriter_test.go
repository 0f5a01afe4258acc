package tools

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/three-good-sources/3gs/gen"
)

// A registry file changed on disk behind the server's back (a hand edit,
// another program) is not overwritten: the change is refused, the file
// keeps the edit, and the message says to reload first.
func TestChangeRefusesAStaleBase(t *testing.T) {
	h, path := editable(t, nil)
	data, _ := os.ReadFile(path)
	edited := bytes.Replace(data, []byte(`"3gs maintainers"`), []byte(`"3gs hand editors"`), 1)
	if bytes.Equal(edited, data) {
		t.Fatal("the test's edit changed nothing")
	}
	os.WriteFile(path, edited, 0o644)
	_, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: sqlite("Learning SQLite")})
	var te *gen.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Text, "changed on disk") || !strings.Contains(te.Text, "reload_registry") {
		t.Fatalf("got %v", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, edited) {
		t.Error("the hand edit was overwritten")
	}
	if _, err := os.Stat(path + ".audit.jsonl"); err == nil {
		t.Error("a refused change reached the audit log")
	}
	h.edit.AllowUnsigned = true // the hand edit is unsigned, as is this test's registry
	if _, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: sqlite("Learning SQLite")}); err != nil {
		t.Fatalf("after reload_registry: %v", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Contains(now, []byte("3gs hand editors")) {
		t.Error("the change after reloading lost the hand edit")
	}
}

// A server that does not hold the registry's lock answers every change
// with the reason it was given.
func TestReadOnlyEditorRefuses(t *testing.T) {
	h, path := editable(t, nil)
	before, _ := os.ReadFile(path)
	h.edit.ReadOnly = "This server serves registry.json read-only: it is locked by process 42."
	_, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: sqlite("Learning SQLite")})
	var te *gen.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Text, "locked by process 42") {
		t.Fatalf("got %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a read-only server changed the file")
	}
}

// A disk that fills part way through an audit line used to leave the
// fragment, and the next line was glued onto it. The fragment is now cut
// back at once, and one left by a crash is cut before the next append.
func TestAuditLogNeverTorn(t *testing.T) {
	h, path := editable(t, nil)
	log := path + ".audit.jsonl"
	upsert := func(name string) error {
		_, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: sqlite(name)})
		return err
	}
	if err := upsert("Learning SQLite"); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(log)

	writeAudit = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	err := upsert("SQLite, learned")
	writeAudit = func(f *os.File, b []byte) (int, error) { return f.Write(b) }
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("a full disk: %v", err)
	}
	if now, _ := os.ReadFile(log); !bytes.Equal(now, whole) {
		t.Fatalf("the failed append left %q", now[len(whole):])
	}

	// A crash mid-write leaves a fragment; the next change cuts it first.
	f, _ := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte(`{"time":"2026-12-24T12:00:00Z","tok`))
	f.Close()
	if err := upsert("SQLite, learned"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(readString(t, log), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], `{"time"`) || strings.Contains(lines[1], `"tok{`) {
		t.Fatalf("after a fragment and a change: %q", lines)
	}

	// RepairAuditLog, run when a server starts, cuts a fragment and says
	// how much; a whole log and a missing one are left alone.
	f, _ = os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte(`{"time":`))
	f.Close()
	if cut, err := RepairAuditLog(log); err != nil || cut != int64(len(`{"time":`)) {
		t.Errorf("RepairAuditLog: %d %v", cut, err)
	}
	if cut, err := RepairAuditLog(log); err != nil || cut != 0 {
		t.Errorf("a whole log: %d %v", cut, err)
	}
	if cut, err := RepairAuditLog(log + ".missing"); err != nil || cut != 0 {
		t.Errorf("a missing log: %d %v", cut, err)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
