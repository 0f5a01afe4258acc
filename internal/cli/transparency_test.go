package cli

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/signature"
)

// serve refuses a registry whose signature has expired, naming the date
// and the fix, and serves it with --allow-expired; doctor fails it, and
// warns when the expiry is near.
func TestServeRefusesAnExpiredRegistry(t *testing.T) {
	keyPath, regPath, _, _ := initNode(t, "Ada")
	kf, err := pkarr.ReadKeyFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	key := kf.Key
	data, _ := os.ReadFile(regPath)
	resign := func(expires time.Time) {
		// The head init's signature covers is kept, so only the expiry
		// differs from what a server would accept.
		_, doc, _ := signature.ReadSigned(regPath, 1<<20)
		v, err := signature.Verify(data, doc, nil)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(regPath+signature.Suffix, signature.SignWith(data, key, expires.Add(-time.Hour), signature.Options{Expires: expires, Log: v.Log}), 0o644)
	}
	past := time.Now().Add(-24 * time.Hour).UTC().Truncate(time.Second)
	resign(past)
	code, _, errOut := serveLines(t, nil, []string{"--registry", regPath})
	if code != ExitFail || !strings.Contains(errOut, "expired on "+past.Format(time.RFC3339)) || !strings.Contains(errOut, "3gs sign --key-file KEY") || !strings.Contains(errOut, "--allow-expired") {
		t.Fatalf("expired: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := serveLines(t, nil, []string{"--registry", regPath, "--allow-expired"}); code != ExitOK {
		t.Fatalf("--allow-expired: exit %d\n%s", code, errOut)
	}
	code, out, _ := run(t, nil, "doctor", "--registry", regPath)
	if code == ExitOK || !strings.Contains(out, "expired on "+past.Format(time.RFC3339)) {
		t.Errorf("doctor on an expired registry: exit %d\n%s", code, out)
	}
	resign(time.Now().Add(20 * time.Hour))
	if _, out, _ := run(t, nil, "doctor", "--registry", regPath); !strings.Contains(out, "expires on") || !strings.Contains(out, "3gs sign") {
		t.Errorf("doctor a day before expiry:\n%s", out)
	}
	// A server with the key renews a signature that close to expiry as it
	// starts; one without leaves it.
	if code, _, errOut := serveLines(t, nil, []string{"--registry", regPath, "--key-file", keyPath}); code != ExitOK {
		t.Fatalf("serve with the key: exit %d\n%s", code, errOut)
	}
	_, doc, _ := signature.ReadSigned(regPath, 1<<20)
	if v, err := signature.Verify(data, doc, pkarr.Public(key)); err != nil || v.Expires.Sub(time.Now()) < 29*24*time.Hour || v.Log == nil {
		t.Errorf("after a start with the key the signature expires %v, covers %+v (%v)", v.Expires, v.Log, err)
	}
}

// A log in the old unsigned format stops serve with the way out.
func TestServeRefusesTheOldAuditLogFormat(t *testing.T) {
	_, regPath, _, _ := initNode(t, "Ada")
	os.WriteFile(regPath+".audit.jsonl", []byte(`{"time":"2026-11-20T10:00:00Z","token":"root","tool":"upsert_category","slug":"go","before_sha256":"`+strings.Repeat("a", 64)+`","after_sha256":"`+strings.Repeat("b", 64)+`","version":"1.0.1"}`+"\n"), 0o600)
	code, _, errOut := serveLines(t, nil, []string{"--registry", regPath})
	if code != ExitFail || !strings.Contains(errOut, "old format") || !strings.Contains(errOut, "3gs audit migrate") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
}
