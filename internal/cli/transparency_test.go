package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// serve refuses a registry whose signature has expired, naming the date
// and the fix, and serves it with --allow-expired; doctor fails it, and
// warns when the expiry is near.
func TestServeRefusesAnExpiredRegistry(t *testing.T) {
	n := curator.Signed(t)
	keyPath, regPath, key := n.KeyFile, n.Registry, n.Key
	data, _ := os.ReadFile(regPath)
	resign := func(expires time.Time) {
		// The head init's signature covers is kept, so only the expiry
		// differs from what a server would accept; signed for 30 days, the
		// span a server with the key keeps when it renews.
		_, doc, _ := signature.ReadSigned(regPath, 1<<20)
		v, err := signature.Verify(data, doc, nil)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(regPath+signature.Suffix, signature.SignWith(data, key, expires.Add(-signature.DefaultValidity), signature.Options{Expires: expires, Log: v.Log}), 0o644)
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
	// The older form, which never expires, is refused the same way: a
	// pre-upgrade copy put back must not be served forever.
	_, doc0, _ := signature.ReadSigned(regPath, 1<<20)
	os.WriteFile(regPath+signature.Suffix, signature.SignWith(data, key, time.Now(), signature.Options{}), 0o644)
	if code, _, errOut := serveLines(t, nil, []string{"--registry", regPath}); code != ExitFail || !strings.Contains(errOut, "never expires") {
		t.Errorf("never expires: exit %d\n%s", code, errOut)
	}
	os.WriteFile(regPath+signature.Suffix, doc0, 0o644)
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
	if v, err := signature.Verify(data, doc, curatorkey.Public(key)); err != nil || v.Expires.Sub(time.Now()) < 29*24*time.Hour || v.Log == nil {
		t.Errorf("after a start with the key the signature expires %v, covers %+v (%v)", v.Expires, v.Log, err)
	}
}

// A log in the old unsigned format stops serve with the way out.
func TestServeRefusesTheOldAuditLogFormat(t *testing.T) {
	regPath := curator.Signed(t).Registry
	os.WriteFile(regPath+".audit.jsonl", []byte(`{"time":"2026-11-20T10:00:00Z","token":"root","tool":"upsert_category","slug":"go","before_sha256":"`+strings.Repeat("a", 64)+`","after_sha256":"`+strings.Repeat("b", 64)+`","version":"1.0.1"}`+"\n"), 0o600)
	code, _, errOut := serveLines(t, nil, []string{"--registry", regPath})
	if code != ExitFail || !strings.Contains(errOut, "old format") || !strings.Contains(errOut, "3gs audit migrate") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
}

// BenchmarkAuditVerify10k is `3gs audit verify --pubkey` on a registry
// whose signed log holds 10,000 entries: every line decoded, linked and
// its signature checked, and the head matched against the signature.
func BenchmarkAuditVerify10k(b *testing.B) {
	dir := b.TempDir()
	env := func() *Env {
		return &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	}
	if code := Run(context.Background(), []string{"init", dir + "/node"}, env()); code != ExitOK {
		b.Fatalf("init: %d", code)
	}
	regPath, keyPath := dir+"/node/registry.json", dir+"/node/curator.key"
	kf, err := curatorkey.ReadKeyFile(keyPath)
	if err != nil {
		b.Fatal(err)
	}
	reg, err := registry.LoadFile(regPath)
	if err != nil {
		b.Fatal(err)
	}
	// 9,999 more entries, as hand edits signed one after another would
	// leave them, ending at the registry on disk.
	rep, err := auditlog.Read(regPath+".audit.jsonl", auditlog.Options{Key: curatorkey.Public(kf.Key)})
	if err != nil {
		b.Fatal(err)
	}
	l := auditlog.Open(regPath+".audit.jsonl", rep)
	prev := rep.Last.After
	var batch []*gen.AuditEntry
	for i := 2; i <= 10000; i++ {
		after := fmt.Sprintf("%064x", i)
		if i == 10000 {
			after = reg.SHA256()
		}
		before := prev
		batch = append(batch, &gen.AuditEntry{Time: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), Action: gen.AuditActionSign, Actor: "cli", Version: reg.Version(), Before: &before, After: after})
		prev = after
	}
	head, err := l.Append(kf.Key, batch...)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	os.WriteFile(regPath+signature.Suffix, signature.SignWith(reg.Bytes(), kf.Key, now, signature.Options{Expires: now.Add(time.Hour), Log: &head}), 0o644)
	pub := curatorkey.Encode(curatorkey.Public(kf.Key))
	b.ResetTimer()
	for b.Loop() {
		var out bytes.Buffer
		e := env()
		e.Stdout = &out
		if code := Run(context.Background(), []string{"audit", "verify", "--pubkey", pub, regPath}, e); code != ExitOK || !strings.HasPrefix(out.String(), "OK: 10000 entries") {
			b.Fatalf("exit %d: %s", code, out.String())
		}
	}
}

// A whole log is not enough: with the signature deleted, a log cut short
// would pass, so audit verify fails when the registry names its curator's
// key and no signature ties the log to it.
func TestAuditVerifyNeedsTheSignature(t *testing.T) {
	keyPath, regPath, pub, _ := initNode(t, "Ada")
	data, _ := os.ReadFile(regPath)
	os.WriteFile(regPath, []byte(strings.Replace(string(data), `"version": "0.1.`, `"version": "0.2.`, 1)), 0o644)
	if code, out, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK || !strings.Contains(out, "as seq 2 (sign)") {
		t.Fatalf("sign after a hand edit: %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := run(t, nil, "audit", "verify", "--pubkey", pub, regPath); code != ExitOK {
		t.Fatalf("before: %d %s", code, out)
	}
	os.Remove(regPath + signature.Suffix)
	code, out, _ := run(t, nil, "audit", "verify", "--pubkey", pub, regPath)
	if code != ExitFail || !strings.HasPrefix(out, "FAIL: the log is whole") || !strings.Contains(out, "3gs sign") {
		t.Errorf("without the signature: %d %s", code, out)
	}
}

// A pending entry in a log no signature covers (a server without the key
// killed mid-change) is noted, not a crash of audit verify.
func TestAuditNotesPendingWithoutACoveredHead(t *testing.T) {
	var out bytes.Buffer
	tg := &logTarget{logPath: "registry.json.audit.jsonl"}
	tg.notes(&out, &auditlog.Report{}, &auditlog.Fit{Pending: 1})
	if !strings.Contains(out.String(), "holds 1 entry after the last entry the registry records") {
		t.Errorf("note: %q", out.String())
	}
}
