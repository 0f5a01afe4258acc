package tools

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
)

// A registry file changed on disk behind the server's back (a hand edit,
// another program) is not overwritten: the change is refused, the file
// keeps the edit, and the message says to reload first.
func TestChangeRefusesAStaleBase(t *testing.T) {
	h, path := editable(t, nil)
	data, _ := os.ReadFile(path)
	edited := bytes.Replace(data, []byte(`"3gs tests (TEST KEY: public, never trusted)"`), []byte(`"3gs hand editors"`), 1)
	if bytes.Equal(edited, data) {
		t.Fatal("the test's edit changed nothing")
	}
	os.WriteFile(path, edited, 0o644)
	_, err := trySQLite(h, "Learning SQLite")
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
	h.node.Editor().AllowUnsigned = true // the hand edit is unsigned, as is this test's registry
	if _, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := trySQLite(h, "Learning SQLite"); err != nil {
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
	h.node.Editor().ReadOnly = "This server serves registry.json read-only: it is locked by process 42."
	_, err := trySQLite(h, "Learning SQLite")
	var te *gen.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Text, "locked by process 42") {
		t.Fatalf("got %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a read-only server changed the file")
	}
}

// A fragment left by a crash mid-append is cut when the log is opened,
// and said so; one written by another program while the server runs makes
// the next change refuse rather than append after it.
func TestAuditLogNeverTorn(t *testing.T) {
	h, path := editable(t, nil)
	log := path + ".audit.jsonl"
	upsert := func(h *Handlers, name string) error {
		_, err := trySQLite(h, name)
		return err
	}
	if err := upsert(h, "Learning SQLite"); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(log)
	f, _ := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte(`{"seq":3,"ti`))
	f.Close()
	if err := upsert(h, "SQLite, learned"); err == nil || !strings.Contains(err.Error(), "another program wrote or cut it") {
		t.Fatalf("a change after a foreign write: %v", err)
	}
	// A server that starts on it cuts the fragment and says so.
	h2, _ := reopen(t, path)
	notes, err := h2.OpenAuditLog()
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "partial line of 12 bytes") {
		t.Fatalf("open: %q %v", notes, err)
	}
	if now, _ := os.ReadFile(log); !bytes.Equal(now, whole) {
		t.Fatalf("after the repair the log is %q", now)
	}
	if err := upsert(h2, "SQLite, learned"); err != nil {
		t.Fatal(err)
	}
	if rep, err := auditlog.Read(log, auditlog.Options{}); err != nil || rep.Entries != 3 {
		t.Fatalf("after the repair and a change: %d entries, %v", rep.Entries, err)
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

// endorse_curator changes the registry: an admin tool, listed to admins
// only, never to the public or a user token (issue 48 trims the public
// list further; this one must stay off it).
func TestEndorseCuratorIsAdminOnly(t *testing.T) {
	tool := gen.LookupTool(gen.ToolEndorseCurator)
	if tool == nil || tool.Tier != gen.TierAdmin || tool.Discoverable {
		t.Fatalf("endorse_curator: %+v", tool)
	}
	for _, tier := range []gen.Tier{gen.TierPublic, gen.TierUser} {
		if slices.Contains(gen.ListedFor(tier), gen.ToolEndorseCurator) {
			t.Errorf("endorse_curator is listed to %s callers", tier)
		}
	}
	if !slices.Contains(gen.ListedFor(gen.TierAdmin), gen.ToolEndorseCurator) {
		t.Error("endorse_curator is not listed to admins")
	}
}
