package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// publishLog serves log as the .audit.jsonl beside a registry document on
// loopback and returns the document's URL.
func publishLog(t *testing.T, log []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/registry.json.audit.jsonl" {
			http.NotFound(w, r)
			return
		}
		w.Write(log)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/registry.json"
}

// lostLog is a signed registry whose log was published and then deleted.
func lostLog(t *testing.T) (regPath, logPath string, log []byte) {
	t.Helper()
	regPath, logPath, _, _ = signedNode(t)
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(logPath); err != nil {
		t.Fatal(err)
	}
	return regPath, logPath, log
}

func TestAuditFetchRestoresThePublishedLog(t *testing.T) {
	regPath, logPath, log := lostLog(t)
	code, out, errOut := run(t, nil, "audit", "fetch", "--from", publishLog(t, log), regPath)
	if code != ExitOK || !strings.Contains(out, "Restored "+logPath+": 1 entry, head seq 1") {
		t.Fatalf("audit fetch: %d %q %q", code, out, errOut)
	}
	got, err := os.ReadFile(logPath)
	if err != nil || !bytes.Equal(got, log) {
		t.Fatalf("restored log %q (%v), want %q", got, err, log)
	}
}

func TestAuditFetchLeavesAnExistingLog(t *testing.T) {
	regPath, logPath, log := lostLog(t)
	if err := os.WriteFile(logPath, []byte("kept\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, nil, "audit", "fetch", "--from", publishLog(t, log), "--registry", regPath)
	if code != ExitFail || !strings.Contains(errOut, "Nothing was fetched") || !strings.Contains(errOut, "move it aside") {
		t.Fatalf("audit fetch over a log: %d %q", code, errOut)
	}
	if got, _ := os.ReadFile(logPath); string(got) != "kept\n" {
		t.Fatalf("the existing log became %q", got)
	}
}

func TestAuditFetchRefusesAnotherCuratorsLog(t *testing.T) {
	regPath, logPath, _ := lostLog(t)
	_, _, other := lostLog(t)
	code, _, errOut := run(t, nil, "audit", "fetch", "--from", publishLog(t, other), regPath)
	if code != ExitFail || !strings.Contains(errOut, "refused:") || !strings.Contains(errOut, "Nothing was written") {
		t.Fatalf("audit fetch of another curator's log: %d %q", code, errOut)
	}
	if _, err := os.Lstat(logPath); !os.IsNotExist(err) {
		t.Fatalf("a refused copy left %s (%v)", logPath, err)
	}
}

func TestAuditFetchSaysWhenTheCopyCannotBeRead(t *testing.T) {
	regPath, logPath, _ := lostLog(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // nothing answers at its address now
	code, _, errOut := run(t, nil, "audit", "fetch", "--from", srv.URL, regPath)
	if code != ExitFail || !strings.Contains(errOut, "could not be read (") || !strings.Contains(errOut, "Fix: check that "+srv.URL+" answers") {
		t.Fatalf("audit fetch from nothing: %d %q", code, errOut)
	}
	if _, err := os.Lstat(logPath); !os.IsNotExist(err) {
		t.Fatalf("a failed fetch left %s (%v)", logPath, err)
	}
}

func TestAuditFetchUsage(t *testing.T) {
	regPath, _, _ := lostLog(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{regPath}, "--from (THREEGS_AUDIT_FROM) is required"},
		{[]string{"--from", "http://127.0.0.1:1"}, "name the registry file"},
		{[]string{"--from", "ftp://127.0.0.1/x", regPath}, "must start with http:// or https://"},
	} {
		code, _, errOut := run(t, nil, append([]string{"audit", "fetch"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("audit fetch %q: %d %q, want %q", c.args, code, errOut, c.want)
		}
	}
}
