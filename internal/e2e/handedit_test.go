package e2e

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// A curator's day with servers running, as several MCP hosts each start
// `3gs serve` on one registry: one server holds the lock and the key, the
// other serves the file read-only. The curator edits the file by hand and
// runs 3gs sign, which cannot write while the first server holds the lock:
// it hands the edit to that server, which records it, gives it the next
// patch version and signs it; the read-only server serves it too, within
// a second or two of the file changing. Before, sign refused ("stop it
// first"), reload_registry refused the unsigned file, and the second
// server kept serving the old registry.
func TestHandEditWithServersRunning(t *testing.T) {
	bin := testkit.Binary(t)
	dir := t.TempDir()
	node := filepath.Join(dir, "node")
	if out, err := exec.Command(bin, "init", node, "--name", "Day Curator").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	reg, key := filepath.Join(node, "registry.json"), filepath.Join(node, "curator.key")
	editor := testkit.Start(t, dir, "editor", bin, "serve", "--registry", reg, "--key-file", key, "--http", "127.0.0.1:0")
	editorAddr := editor.WaitLog(t, testkit.Serving, 0, 20*time.Second)[1]
	reader := testkit.Start(t, dir, "reader", bin, "serve", "--registry", reg, "--http", "127.0.0.1:0")
	readerAddr := reader.WaitLog(t, testkit.Serving, 0, 20*time.Second)[1]
	testkit.WaitFor(t, "the editor's sign channel", 10*time.Second, func() bool {
		_, err := os.Stat(reg + ".sock")
		return err == nil
	})

	data, err := os.ReadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(reg, bytes.Replace(data, []byte(`"description": "`), []byte(`"description": "Edited by hand. `), 1), 0o644)
	out, err := exec.Command(bin, "sign", reg).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "recorded the edit in its audit log, signed it and serves it") || !strings.Contains(string(out), "version 0.1.1") {
		t.Fatalf("sign with the server running: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "verify", reg).CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "OK") {
		t.Errorf("verify after sign: %v\n%s", err, out)
	}
	c := &http.Client{Timeout: 5 * time.Second}
	for _, base := range []string{"http://" + editorAddr, "http://" + readerAddr} {
		testkit.WaitFor(t, base+" serving version 0.1.1", 10*time.Second, func() bool {
			h, err := getHealth(c, base)
			return err == nil && h.Registry.Version == "0.1.1"
		})
	}

	// The same bytes with the signature deleted are no edit: sign with
	// the server running refuses, rather than reporting a signature it
	// did not make and serving the registry unverified.
	os.Remove(reg + ".sig")
	if out, err := exec.Command(bin, "sign", reg).CombinedOutput(); err == nil || strings.Contains(string(out), "signed it and serves it") {
		t.Errorf("sign with the signature deleted: %v\n%s", err, out)
	}
	if h, err := getHealth(c, "http://"+editorAddr); err != nil || h.Registry.Version != "0.1.1" {
		t.Errorf("after the refused sign: %+v, %v", h, err)
	}
}
