package cli

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/signature"
)

// signedNode is a curator's registry signed once by 3gs sign, so its
// audit log holds the start entry. It returns the registry, its log, the
// key file and the public key.
func signedNode(t *testing.T) (regPath, logPath, keyPath, pub string) {
	t.Helper()
	_, keyPath, pub, regPath = curatorSetup(t)
	if code, out, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatalf("sign: %d %s %s", code, out, errOut)
	}
	return regPath, regPath + ".audit.jsonl", keyPath, pub
}

var versionField = regexp.MustCompile(`"version": "[^"]*"`)

// handEdit changes the registry's version to 1.1.N, as a curator editing
// the file would, and returns the new bytes.
func handEdit(t *testing.T, regPath string, n int) []byte {
	t.Helper()
	data, err := os.ReadFile(regPath)
	if err != nil {
		t.Fatal(err)
	}
	loc := versionField.FindIndex(data)
	edited := append(append(bytes.Clone(data[:loc[0]]), fmt.Sprintf(`"version": "1.1.%d"`, n)...), data[loc[1]:]...)
	if err := os.WriteFile(regPath, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	return edited
}

// logLines are the log's lines without their newlines.
func logLines(t *testing.T, logPath string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(data, []byte("\n"))[:bytes.Count(data, []byte("\n"))]
}

func entry(t *testing.T, line []byte) *gen.AuditEntry {
	t.Helper()
	e, err := gen.DecodeAuditEntry(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return e
}

func readKey(t *testing.T, keyPath string) ed25519.PrivateKey {
	t.Helper()
	kf, err := curatorkey.ReadKeyFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	return kf.Key
}

// sigOf is the registry's signature document, checked.
func sigOf(t *testing.T, regPath string) *signature.Verified {
	t.Helper()
	data, _ := os.ReadFile(regPath)
	doc, _ := os.ReadFile(regPath + signature.Suffix)
	v, err := signature.Verify(data, doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSignStartsTheAuditLog(t *testing.T) {
	_, keyPath, pub, regPath := curatorSetup(t)
	before := time.Now()
	code, out, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath)
	if code != ExitOK || !strings.Contains(out, "Signed "+regPath+" version 1.1.0 (sha256 "+sha256Hex(mustRead(t, regPath))+")") ||
		!strings.Contains(out, "recorded the registry as seq 1 (start)") || !strings.Contains(out, "valid until ") || errOut != "" {
		t.Fatalf("sign: %d\n%s%s", code, out, errOut)
	}
	lines := logLines(t, regPath+".audit.jsonl")
	if len(lines) != 1 {
		t.Fatalf("log has %d lines", len(lines))
	}
	e := entry(t, lines[0])
	if e.Seq != 1 || e.Action != gen.AuditActionStart || e.Actor != "cli" || e.Version != "1.1.0" || e.After != sha256Hex(mustRead(t, regPath)) || e.Before != nil || e.Signature == nil {
		t.Errorf("start entry %s", lines[0])
	}
	v := sigOf(t, regPath)
	if v.Log == nil || v.Log.Seq != 1 || v.Log.Hash != auditlog.HashLine(bytes.TrimSuffix(lines[0], []byte("\n"))) {
		t.Errorf("the signature covers %v, not the log's head", v.Log)
	}
	if want := before.Add(signature.DefaultValidity); v.Expires.Before(want.Add(-2*time.Second)) || v.Expires.After(want.Add(2*time.Second)) {
		t.Errorf("expires %v, want about %v", v.Expires, want)
	}
	code, out, errOut = run(t, nil, "audit", "verify", "--pubkey", pub, regPath)
	if code != ExitOK || !strings.HasPrefix(out, "OK: 1 entry, head seq 1 (") || !strings.HasSuffix(out, ", signed from seq 1, registry version 1.1.0 matches the head\n") || errOut != "" {
		t.Errorf("audit verify: %d %q %q", code, out, errOut)
	}
	// Without --pubkey the registry's own key is used, and a note says
	// what that proves; REGISTRY_PATH names the registry.
	code, out, errOut = run(t, map[string]string{"REGISTRY_PATH": regPath}, "audit", "verify")
	if code != ExitOK || !strings.HasPrefix(out, "OK: 1 entry") || !strings.Contains(errOut, "proves the log is intact but not who wrote it") {
		t.Errorf("audit verify without --pubkey: %d %q %q", code, out, errOut)
	}
	if code, _, errOut = run(t, nil, "audit", "verify"); code != ExitUsage || !strings.Contains(errOut, "the embedded registry has no audit log") {
		t.Errorf("audit verify of the embedded registry: %d %s", code, errOut)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSignRecordsAHandEdit(t *testing.T) {
	regPath, logPath, keyPath, pub := signedNode(t)
	first := entry(t, logLines(t, logPath)[0])
	edited := handEdit(t, regPath, 1)
	code, out, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath)
	if code != ExitOK || !strings.Contains(out, "recorded the registry as seq 2 (sign)") {
		t.Fatalf("sign after an edit: %d %s %s", code, out, errOut)
	}
	lines := logLines(t, logPath)
	e := entry(t, lines[len(lines)-1])
	if len(lines) != 2 || e.Action != gen.AuditActionSign || e.Actor != "cli" || e.Version != "1.1.1" ||
		e.Before == nil || *e.Before != first.After || e.After != sha256Hex(edited) || e.Prev == nil || *e.Prev != auditlog.HashLine(bytes.TrimSuffix(lines[0], []byte("\n"))) {
		t.Errorf("sign entry %s", lines[len(lines)-1])
	}
	if v := sigOf(t, regPath); v.Log == nil || v.Log.Seq != 2 {
		t.Errorf("the signature covers %v", v.Log)
	}
	if code, out, _ := run(t, nil, "audit", "verify", "--pubkey", pub, regPath); code != ExitOK || !strings.HasPrefix(out, "OK: 2 entries, head seq 2") || !strings.Contains(out, "registry version 1.1.1 matches the head") {
		t.Errorf("audit verify: %d %s", code, out)
	}
}

// Signing an unchanged registry again renews its signature's expiry and
// adds nothing to the log.
func TestSignAgainRenewsTheExpiry(t *testing.T) {
	_, keyPath, _, regPath := curatorSetup(t)
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, "--expires", "48h", regPath); code != ExitOK {
		t.Fatal(errOut)
	}
	short := sigOf(t, regPath)
	logBefore := mustRead(t, regPath+".audit.jsonl")
	code, out, errOut := run(t, map[string]string{"THREEGS_EXPIRES": "2160h"}, "sign", "--key-file", keyPath, regPath)
	if code != ExitOK || !strings.Contains(out, "already records this registry at seq 1, so nothing was added") {
		t.Fatalf("re-sign: %d %s %s", code, out, errOut)
	}
	if !bytes.Equal(mustRead(t, regPath+".audit.jsonl"), logBefore) {
		t.Error("re-signing an unchanged registry changed its log")
	}
	long := sigOf(t, regPath)
	if d := long.Expires.Sub(short.Expires); d < 2100*time.Hour || long.Log == nil || *long.Log != *short.Log {
		t.Errorf("expiry moved by %v (want about 2112h), log head %v then %v", d, short.Log, long.Log)
	}
	if !strings.Contains(out, "valid until "+long.Expires.UTC().Format(time.RFC3339)) {
		t.Errorf("sign does not print the expiry %v: %s", long.Expires, out)
	}
	for _, bad := range []string{"10m", "soon", "50000h"} {
		if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, "--expires", bad, regPath); code != ExitUsage || !strings.Contains(errOut, "--expires") {
			t.Errorf("--expires %s: %d %s", bad, code, errOut)
		}
	}
}

// If writing the signature fails, the entry just appended is taken back:
// the log never records a signing that did not happen.
func TestSignTakesTheEntryBackWhenTheSignatureFails(t *testing.T) {
	regPath, logPath, keyPath, _ := signedNode(t)
	logBefore := mustRead(t, logPath)
	handEdit(t, regPath, 1)
	os.Remove(regPath + signature.Suffix)
	os.Mkdir(regPath+signature.Suffix, 0o755) // cannot be replaced by a file
	code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath)
	if code != ExitFail || !strings.Contains(errOut, "cannot write "+regPath+".sig") || !strings.Contains(errOut, "the audit log is as it was") {
		t.Errorf("sign with an unwritable signature: %d %s", code, errOut)
	}
	if !bytes.Equal(mustRead(t, logPath), logBefore) {
		t.Errorf("the log kept the entry of a failed sign:\n%s", mustRead(t, logPath))
	}
}

// tenEntries is a registry whose log holds ten entries: a sign, then nine
// hand edits each signed.
func tenEntries(t *testing.T) (regPath, logPath, keyPath, pub string) {
	t.Helper()
	regPath, logPath, keyPath, pub = signedNode(t)
	for i := 1; i <= 9; i++ {
		handEdit(t, regPath, i)
		if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
			t.Fatal(errOut)
		}
	}
	if n := len(logLines(t, logPath)); n != 10 {
		t.Fatalf("%d entries, want 10", n)
	}
	return
}

// Every way of tampering with a signed log fails audit verify at the
// first entry it touches.
func TestAuditVerifyTamper(t *testing.T) {
	regPath, logPath, keyPath, pub := tenEntries(t)
	if code, out, _ := run(t, nil, "audit", "verify", "--pubkey", pub, regPath); code != ExitOK || !strings.HasPrefix(out, "OK: 10 entries, head seq 10 (") {
		t.Fatalf("untouched: %d %s", code, out)
	}
	good := mustRead(t, logPath)
	lines := logLines(t, logPath)
	join := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	other, _ := curatorkey.Generate()
	cases := []struct {
		name   string
		tamper func() []byte
		seq    int
	}{
		{"one byte of entry 4 edited", func() []byte {
			l := bytes.Replace(lines[3], []byte(`"actor":"cli"`), []byte(`"actor":"clj"`), 1)
			return join(join(lines[:3]...), l, join(lines[4:]...))
		}, 4},
		{"entry 4 deleted", func() []byte { return join(join(lines[:3]...), join(lines[4:]...)) }, 4},
		{"entries 4 and 5 swapped", func() []byte {
			return join(join(lines[:3]...), lines[4], lines[3], join(lines[5:]...))
		}, 4},
		{"the last two entries cut off", func() []byte { return join(lines[:8]...) }, 9},
		{"an entry signed by another key appended", func() []byte {
			os.WriteFile(logPath, good, 0o600)
			rep, err := auditlog.Read(logPath, auditlog.Options{Key: curatorkey.Public(readKey(t, keyPath))})
			if err != nil {
				t.Fatal(err)
			}
			before := rep.Last.After
			e := &gen.AuditEntry{Time: time.Now().UTC(), Action: gen.AuditActionUpsert, Actor: "mallory", Version: "9.9.9", Before: &before, After: strings.Repeat("ab", 32)}
			if _, err := auditlog.Open(logPath, rep).Append(other, e); err != nil {
				t.Fatal(err)
			}
			return mustRead(t, logPath)
		}, 11},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer os.WriteFile(logPath, good, 0o600)
			os.WriteFile(logPath, c.tamper(), 0o600)
			code, out, _ := run(t, nil, "audit", "verify", "--pubkey", pub, regPath)
			if want := fmt.Sprintf("FAIL: seq %d: ", c.seq); code != ExitFail || !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 {
				t.Errorf("exit %d, %q; want exit 1 and one line starting %q", code, out, want)
			}
			// sign refuses to extend it, naming the same seq.
			code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath)
			if want := fmt.Sprintf("does not verify at seq %d", c.seq); code != ExitFail || !strings.Contains(errOut, want) || !strings.Contains(errOut, "3gs audit verify") {
				t.Errorf("sign over it: %d %s; want %q", code, errOut, want)
			}
		})
	}
	// audit log prints the entries before the damage, then FAIL.
	l := bytes.Replace(lines[3], []byte(`"actor":"cli"`), []byte(`"actor":"clj"`), 1)
	os.WriteFile(logPath, join(join(lines[:3]...), l, join(lines[4:]...)), 0o600)
	code, out, errOut := run(t, nil, "audit", "log", "--pubkey", pub, regPath)
	if code != ExitFail || strings.Count(out, "\n") != 3 || !strings.HasPrefix(errOut, "FAIL: seq 4: ") {
		t.Errorf("audit log of a tampered log: %d\n%s%s", code, out, errOut)
	}
}

// What an interrupted write leaves is not tampering: audit verify notes
// it, and 3gs sign removes it before signing.
func TestAuditVerifyNotesWhatACrashLeft(t *testing.T) {
	regPath, logPath, keyPath, pub := tenEntries(t)
	good := mustRead(t, logPath)

	// A torn last line.
	os.WriteFile(logPath, append(bytes.Clone(good), `{"seq":11,"ti`...), 0o600)
	code, out, errOut := run(t, nil, "audit", "verify", "--pubkey", pub, regPath)
	if code != ExitOK || !strings.HasPrefix(out, "OK: 10 entries") || !strings.Contains(errOut, "is partial (13 bytes without a newline)") || !strings.Contains(errOut, "3gs serve removes it") {
		t.Errorf("torn tail: %d %q %q", code, out, errOut)
	}
	if code, _, errOut = run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK || !strings.Contains(errOut, "ended in a partial line of 13 bytes") {
		t.Errorf("sign over a torn tail: %d %s", code, errOut)
	}
	if !bytes.Equal(mustRead(t, logPath), good) {
		t.Error("sign did not cut the torn tail back to the whole entries")
	}

	// An entry after the signed head: a change whose registry was never
	// written.
	rep, err := auditlog.Read(logPath, auditlog.Options{Key: curatorkey.Public(readKey(t, keyPath))})
	if err != nil {
		t.Fatal(err)
	}
	before, slug := rep.Last.After, "rust-learning"
	e := &gen.AuditEntry{Time: time.Now().UTC(), Action: gen.AuditActionRemove, Slug: &slug, Actor: "alice", Version: "1.1.10", Before: &before, After: strings.Repeat("cd", 32)}
	if _, err := auditlog.Open(logPath, rep).Append(readKey(t, keyPath), e); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, nil, "audit", "verify", "--pubkey", pub, regPath)
	if code != ExitOK || !strings.HasPrefix(out, "OK: 11 entries, head seq 11") || !strings.Contains(out, "registry version 1.1.9 matches seq 10, the head its signature covers") ||
		!strings.Contains(errOut, "holds 1 entry after seq 10") || !strings.Contains(errOut, "3gs serve removes them") {
		t.Errorf("entry after the signed head: %d %q %q", code, out, errOut)
	}
	if code, out, errOut = run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK || !strings.Contains(errOut, "held 1 entry after seq 10") || !strings.Contains(out, "already records this registry at seq 10") {
		t.Errorf("sign over an entry after the signed head: %d %s %s", code, out, errOut)
	}
	if !bytes.Equal(mustRead(t, logPath), good) {
		t.Error("sign did not cut the entry after the signed head")
	}
	if code, out, errOut = run(t, nil, "audit", "verify", "--pubkey", pub, regPath); code != ExitOK || errOut != "" || !strings.HasSuffix(out, "registry version 1.1.9 matches the head\n") {
		t.Errorf("after sign: %d %q %q", code, out, errOut)
	}
}

// A log of the old format is refused until migrated; migrating keeps it
// as LOG.v1 and records its digest in the new log's start entry.
func TestAuditMigrateTheOldFormat(t *testing.T) {
	dir, keyPath, pub, regPath := curatorSetup(t)
	logPath := regPath + ".audit.jsonl"
	legacy := []byte(`{"time":"2026-01-02T03:04:05Z","token":"alice","tool":"upsert_category","slug":"go-learning","before_sha256":"` + strings.Repeat("a", 64) + `","after_sha256":"` + strings.Repeat("b", 64) + `"}` + "\n")
	os.WriteFile(logPath, legacy, 0o600)

	code, out, _ := run(t, nil, "audit", "verify", regPath)
	if code != ExitFail || !strings.HasPrefix(out, "FAIL: "+logPath+" is an audit log in the old format") || !strings.Contains(out, "3gs audit migrate --key-file KEY "+regPath) {
		t.Errorf("audit verify: %d %s", code, out)
	}
	code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath)
	if code != ExitFail || !strings.Contains(errOut, "3gs audit migrate --key-file KEY "+regPath) {
		t.Errorf("sign: %d %s", code, errOut)
	}
	if _, err := os.Stat(regPath + ".sig"); err == nil {
		t.Error("sign wrote a signature over a log of the old format")
	}
	// Only the curator key migrates.
	otherKey := filepath.Join(dir, "other.key")
	run(t, nil, "keygen", "--out", otherKey)
	if code, _, errOut = run(t, nil, "audit", "migrate", "--key-file", otherKey, regPath); code != ExitFail || !strings.Contains(errOut, "not the registry's curator key") {
		t.Errorf("migrate with another key: %d %s", code, errOut)
	}
	if code, _, errOut = run(t, nil, "audit", "migrate", regPath); code != ExitUsage || !strings.Contains(errOut, "no key") {
		t.Errorf("migrate without a key: %d %s", code, errOut)
	}

	code, out, errOut = run(t, nil, "audit", "migrate", regPath, "--key-file", keyPath)
	if code != ExitOK || !strings.Contains(out, "kept the old log as "+logPath+".v1 (sha256 "+sha256Hex(legacy)+")") || !strings.Contains(out, "covering the audit log up to seq 1") {
		t.Fatalf("migrate: %d %s %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "Note: "+regPath+" had no signature before; the new signature vouches for the registry as it is now") {
		t.Errorf("migrate does not say it signed a registry no signature vouched for: %s", errOut)
	}
	if !bytes.Equal(mustRead(t, logPath+".v1"), legacy) {
		t.Error("the old log was not kept as it was")
	}
	lines := logLines(t, logPath)
	e := entry(t, lines[0])
	if len(lines) != 1 || e.Action != gen.AuditActionStart || e.LegacyLogSHA256 == nil || *e.LegacyLogSHA256 != sha256Hex(legacy) || e.After != sha256Hex(mustRead(t, regPath)) {
		t.Errorf("new log %s", mustRead(t, logPath))
	}
	if code, out, _ := run(t, nil, "audit", "verify", "--pubkey", pub, regPath); code != ExitOK || !strings.Contains(out, "matches the head") {
		t.Errorf("audit verify after migrate: %d %s", code, out)
	}
	if code, out, _ := run(t, nil, "verify", "--pubkey", pub, regPath); code != ExitOK {
		t.Errorf("verify after migrate: %d %s", code, out)
	}
	// Once is enough; and an earlier LOG.v1 is never overwritten.
	if code, _, errOut = run(t, nil, "audit", "migrate", "--key-file", keyPath, regPath); code != ExitFail || !strings.Contains(errOut, "already in the current format") {
		t.Errorf("migrate again: %d %s", code, errOut)
	}
	os.WriteFile(logPath, legacy, 0o600)
	if code, _, errOut = run(t, nil, "audit", "migrate", "--key-file", keyPath, regPath); code != ExitFail || !strings.Contains(errOut, logPath+".v1 already exists") {
		t.Errorf("migrate over an existing .v1: %d %s", code, errOut)
	}
	if !bytes.Equal(mustRead(t, logPath), legacy) {
		t.Error("a refused migrate changed the log")
	}
	// --audit-log names another log, in the hint too.
	custom := filepath.Join(dir, "changes.jsonl")
	os.WriteFile(custom, legacy, 0o600)
	if code, out, _ = run(t, nil, "audit", "verify", "--audit-log", custom, regPath); code != ExitFail || !strings.Contains(out, "--audit-log "+custom+" "+regPath) {
		t.Errorf("audit verify --audit-log: %d %s", code, out)
	}
	if code, out, errOut = run(t, map[string]string{"THREEGS_AUDIT_LOG": custom}, "audit", "migrate", "--key-file", keyPath, regPath); code != ExitOK || !strings.Contains(out, "kept the old log as "+custom+".v1") {
		t.Errorf("migrate THREEGS_AUDIT_LOG: %d %s %s", code, out, errOut)
	}
}

// audit log prints the entries the filters pick, readable or as stored.
func TestAuditLogFilters(t *testing.T) {
	regPath, logPath, keyPath, pub := signedNode(t)
	key := readKey(t, keyPath)
	rep, err := auditlog.Read(logPath, auditlog.Options{Key: curatorkey.Public(key)})
	if err != nil {
		t.Fatal(err)
	}
	// Three changes by a server, the last back to the registry on disk,
	// and the signature made again to cover them.
	sha := sha256Hex(mustRead(t, regPath))
	x, y := strings.Repeat("1", 64), strings.Repeat("2", 64)
	str := func(s string) *string { return &s }
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	l := auditlog.Open(logPath, rep)
	head, err := l.Append(key,
		&gen.AuditEntry{Time: now, Action: gen.AuditActionUpsert, Slug: str("go-learning"), Actor: "alice", Version: "1.1.1", Before: str(sha), After: x},
		&gen.AuditEntry{Time: now, Action: gen.AuditActionRemove, Slug: str("rust-learning"), Actor: "bob", Version: "1.1.2", Before: str(x), After: y},
		&gen.AuditEntry{Time: now, Action: gen.AuditActionUpsert, Slug: str("go-learning"), Actor: "alice", Version: "1.1.0", Before: str(y), After: sha},
	)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(regPath+".sig", signature.SignWith(mustRead(t, regPath), key, time.Now(), signature.Options{Expires: time.Now().Add(time.Hour), Log: &head}), 0o644)
	if code, out, _ := run(t, nil, "audit", "verify", "--pubkey", pub, regPath); code != ExitOK || !strings.HasPrefix(out, "OK: 4 entries") {
		t.Fatalf("audit verify: %d %s", code, out)
	}
	seqs := func(out string) string {
		var s []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				s = append(s, f[0])
			}
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		env  map[string]string
		args []string
		seqs string
	}{
		{nil, nil, "1,2,3,4"},
		{nil, []string{"--slug", "go-learning"}, "2,4"},
		{map[string]string{"THREEGS_AUDIT_SLUG": "rust-learning"}, nil, "3"},
		{nil, []string{"--action", "upsert"}, "2,4"},
		{nil, []string{"--action", "start"}, "1"},
		{nil, []string{"--since", "2"}, "3,4"},
		{map[string]string{"THREEGS_AUDIT_SINCE": "1"}, []string{"--action", "upsert"}, "2,4"},
		{nil, []string{"--slug", "go-learning", "--since", "3"}, "4"},
		{nil, []string{"--since", "4"}, ""},
	} {
		code, out, errOut := run(t, c.env, append(append([]string{"audit", "log", "--pubkey", pub}, c.args...), regPath)...)
		if code != ExitOK || seqs(out) != c.seqs || errOut != "" {
			t.Errorf("%v %v: %d, seqs %q, want %q\n%s%s", c.env, c.args, code, seqs(out), c.seqs, out, errOut)
		}
	}
	// The readable form: seq time action slug actor version after[:12].
	_, out, _ := run(t, nil, "audit", "log", "--pubkey", pub, "--action", "remove", regPath)
	if want := "3 2026-03-04T05:06:07Z remove rust-learning bob 1.1.2 " + y[:12] + "\n"; out != want {
		t.Errorf("readable line %q, want %q", out, want)
	}
	if _, out, _ = run(t, nil, "audit", "log", "--pubkey", pub, "--action", "start", regPath); !strings.HasPrefix(out, "1 ") || !strings.Contains(out, " start - cli 1.1.0 "+sha[:12]+"\n") {
		t.Errorf("start entry %q", out)
	}
	// --json: the lines as stored.
	_, out, _ = run(t, nil, "audit", "log", "--pubkey", pub, "--json", regPath)
	if out != string(mustRead(t, logPath)) {
		t.Errorf("--json printed\n%s\nnot the log\n%s", out, mustRead(t, logPath))
	}
	if code, _, errOut := run(t, nil, "audit", "log", "--action", "edit", regPath); code != ExitUsage || !strings.Contains(errOut, "--action (THREEGS_AUDIT_ACTION) must be") {
		t.Errorf("bad --action: %d %s", code, errOut)
	}
	if code, _, errOut := run(t, nil, "audit", "log", "--since", "-1", regPath); code != ExitUsage || !strings.Contains(errOut, "--since (THREEGS_AUDIT_SINCE)") {
		t.Errorf("bad --since: %d %s", code, errOut)
	}
}

// A registry signed without a log head, with no log beside it, has
// nothing to check, which is not a failure.
func TestAuditVerifyWithoutALog(t *testing.T) {
	_, keyPath, pub, regPath := curatorSetup(t)
	os.WriteFile(regPath+".sig", signature.Sign(mustRead(t, regPath), readKey(t, keyPath), time.Now()), 0o644)
	code, out, errOut := run(t, nil, "audit", "verify", "--pubkey", pub, regPath)
	if code != ExitOK || !strings.HasPrefix(out, "OK: 0 entries: "+regPath+".audit.jsonl is empty or missing") {
		t.Errorf("%d %q %q", code, out, errOut)
	}
	// A signature that covers a head, with the log gone, is a failure.
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatal(errOut)
	}
	os.Remove(regPath + ".audit.jsonl")
	if code, out, _ := run(t, nil, "audit", "verify", "--pubkey", pub, regPath); code != ExitFail || !strings.Contains(out, "covers the audit log up to seq 1, and the log is empty or missing") {
		t.Errorf("log deleted: %d %s", code, out)
	}
}
