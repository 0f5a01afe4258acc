package e2e

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// An origin whose audit log is lost (deleted, or left behind by a copy of
// the registry and its signature) refuses to serve and names the fix; a
// read replica that followed it kept a verified copy of the log, from
// which 3gs audit fetch restores it; the log then verifies and the origin
// serves again. Real processes on loopback.
func TestLostLogRestoredFromReplica(t *testing.T) {
	t.Parallel() // its own processes, ports and files
	bin := testkit.Binary(t)
	dir := t.TempDir()
	cur := curator.Signed(t)
	// A second entry: the curator edits and signs again.
	data, err := os.ReadFile(cur.Registry)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cur.Registry, bytes.Replace(data, []byte(`"version": "1.0.0"`), []byte(`"version": "1.0.1"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "sign", "--key-file", cur.KeyFile, cur.Registry).CombinedOutput(); err != nil {
		t.Fatalf("sign: %v\n%s", err, out)
	}
	log, err := os.ReadFile(cur.Log)
	if err != nil || bytes.Count(log, []byte("\n")) != 2 {
		t.Fatalf("the origin's log holds %q (%v), want 2 entries", log, err)
	}

	origin := testkit.Start(t, dir, "origin", bin, "serve", "--http", "127.0.0.1:0", "--registry", cur.Registry)
	addr := origin.WaitLog(t, testkit.Serving, 0, 30*time.Second)[1]
	replica := testkit.Start(t, dir, "replica", bin, "serve", "--http", "127.0.0.1:0", "--follow", "http://"+addr, "--follow-pubkey", cur.Pub,
		"--follow-cache", filepath.Join(dir, "follow-cache"))
	replicaURL := "http://" + replica.WaitLog(t, testkit.Serving, 0, 30*time.Second)[1]
	client := &http.Client{Timeout: 10 * time.Second}
	// The replica serves the origin's log from its own copy.
	if status, body := get(t, client, replicaURL+"/audit"); status != http.StatusOK || !bytes.Equal(body, log) {
		t.Fatalf("the replica's /audit: %d %q, want the origin's log %q", status, body, log)
	}

	origin.Kill()
	if err := os.Remove(cur.Log); err != nil {
		t.Fatal(err)
	}
	code, out := run3gs(t, bin, "serve", "--http", "127.0.0.1:0", "--registry", cur.Registry)
	if code == 0 || !strings.Contains(out, "the log is empty or missing") || !strings.Contains(out, "3gs audit fetch --from REPLICA_OR_PUBLISHED_URL --registry "+cur.Registry) {
		t.Fatalf("serve without its log: exit %d, want a refusal naming 3gs audit fetch:\n%s", code, out)
	}
	if code, out := run3gs(t, bin, "audit", "fetch", "--from", replicaURL, "--registry", cur.Registry); code != 0 || !strings.Contains(out, "Restored "+cur.Log+": 2 entries") {
		t.Fatalf("audit fetch from the replica: exit %d\n%s", code, out)
	}
	if got, err := os.ReadFile(cur.Log); err != nil || !bytes.Equal(got, log) {
		t.Fatalf("the restored log is %q (%v), want %q", got, err, log)
	}
	if code, out := run3gs(t, bin, "audit", "verify", "--pubkey", cur.Pub, cur.Registry); code != 0 || !strings.HasPrefix(out, "OK: 2 entries") {
		t.Fatalf("audit verify of the restored log: exit %d\n%s", code, out)
	}
	again := testkit.Start(t, dir, "origin-again", bin, "serve", "--http", addr, "--registry", cur.Registry)
	again.WaitLog(t, testkit.Serving, 0, 30*time.Second)
	if status, body := get(t, client, "http://"+addr+"/audit"); status != http.StatusOK || !bytes.Equal(body, log) {
		t.Fatalf("the origin's /audit after the restore: %d %q", status, body)
	}
}

// run3gs runs bin with args to its end (a minute at most) and returns its
// exit code and its stdout and stderr together.
func run3gs(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	code := exitCode(err)
	if code < 0 {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return code, string(out)
}

// get reads url whole with c.
func get(t *testing.T, c *http.Client, url string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := testkit.Do(t, c, req)
	return resp.StatusCode, body
}
