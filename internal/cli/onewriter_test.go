package cli

import (
	"bytes"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/tools"
)

// A second server on a registry that another process edits starts, serves
// it read-only and says why; holding the lock, a server repairs a torn
// audit log and says so.
func TestOneEditorPerRegistry(t *testing.T) {
	_, keyPath, _, regPath := curatorSetup(t)
	srvd := &app.Served{Name: regPath, Path: regPath}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))

	other, err := safefile.TryLock(regPath)
	if err != nil {
		t.Fatal(err)
	}
	edit := &tools.EditConfig{Path: regPath, AuditLog: regPath + ".audit.jsonl"}
	lock := app.LockForEditing(log, srvd, edit)
	if lock != nil || !strings.Contains(edit.ReadOnly, "read-only") || !strings.Contains(edit.ReadOnly, "process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("with the lock held elsewhere: lock %v, ReadOnly %q", lock, edit.ReadOnly)
	}
	if !strings.Contains(logs.String(), "serving it read-only") {
		t.Errorf("nothing logged: %s", logs.String())
	}
	other.Unlock()

	edit = &tools.EditConfig{Path: regPath, AuditLog: regPath + ".audit.jsonl"}
	lock = app.LockForEditing(log, srvd, edit)
	if lock == nil || edit.ReadOnly != "" {
		t.Fatalf("free to edit: lock %v, ReadOnly %q", lock, edit.ReadOnly)
	}
	defer lock.Unlock()

	// While a server edits the registry, 3gs sign refuses to sign over it.
	code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath)
	if code != ExitFail || !strings.Contains(errOut, "locked by process") {
		t.Errorf("sign while a server edits: %d %s", code, errOut)
	}
}
