package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/three-good-sources/3gs/internal/registry"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// curatorSetup makes a key with keygen and a copy of the frozen registry
// Basic naming that key as curator, in a fresh directory.
func curatorSetup(t *testing.T) (dir, keyPath, pub, regPath string) {
	t.Helper()
	dir = t.TempDir()
	keyPath = filepath.Join(dir, "curator.key")
	code, out, errOut := run(t, nil, "keygen", "--out", keyPath)
	if code != ExitOK {
		t.Fatalf("keygen: %d %s", code, errOut)
	}
	pub = strings.TrimSpace(out)
	if _, err := curatorkey.ParsePublicKey(pub); err != nil || !strings.HasPrefix(pub, "pk:") {
		t.Fatalf("keygen printed %q: %v", pub, err)
	}
	if !strings.Contains(errOut, "3gs sign --key-file "+keyPath) {
		t.Errorf("keygen does not say what to do next: %s", errOut)
	}
	st, err := os.Stat(keyPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v mode %v, want 0600", err, st.Mode())
	}
	data := testkit.WithCurator(frozen.Registry(frozen.Basic), pub)
	regPath = filepath.Join(dir, "registry.json")
	if err := os.WriteFile(regPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, keyPath, pub, regPath
}

func TestKeygenSignVerifyRoundTrip(t *testing.T) {
	_, keyPath, pub, regPath := curatorSetup(t)
	code, out, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath)
	if code != ExitOK || !strings.Contains(out, "wrote "+regPath+".sig") {
		t.Fatalf("sign: %d %s %s", code, out, errOut)
	}
	z := strings.TrimPrefix(pub, "pk:")
	want := regexp.MustCompile(`^OK: signed by ` + z + ` \(curator ` + regexp.QuoteMeta(frozenCurator) + `\), in force until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$`)
	for _, args := range [][]string{
		{"verify", regPath},
		{"verify", "--pubkey", pub, regPath},
		{"verify", "--pubkey", z, regPath, regPath + ".sig"},
	} {
		code, out, errOut = run(t, nil, args...)
		if code != ExitOK || !want.MatchString(out) {
			t.Errorf("%v: %d %q %s; want %q", args, code, out, errOut, want)
		}
		if hasKey := len(args) > 2; hasKey == strings.Contains(errOut, "To prove who signed") {
			t.Errorf("%v: the note about --pubkey should appear exactly when no key is given: %q", args, errOut)
		}
	}
	// The key can also come from PKARR_SECRET_KEY, and re-signing replaces
	// the signature file.
	seed, _ := os.ReadFile(keyPath)
	code, _, errOut = run(t, map[string]string{"PKARR_SECRET_KEY": strings.TrimSpace(string(seed))}, "sign", regPath)
	if code != ExitOK {
		t.Fatalf("sign with PKARR_SECRET_KEY: %s", errOut)
	}
	if code, out, _ = run(t, nil, "verify", regPath); code != ExitOK {
		t.Errorf("after re-signing: %s", out)
	}
	// Keys are never overwritten.
	if code, _, errOut = run(t, nil, "keygen", "--out", keyPath); code != ExitFail || !strings.Contains(errOut, "already exists") {
		t.Errorf("keygen over an existing key: %d %s", code, errOut)
	}
	if after, _ := os.ReadFile(keyPath); !bytes.Equal(after, seed) {
		t.Error("keygen changed an existing key file")
	}
}

func TestVerifyFailures(t *testing.T) {
	dir, keyPath, _, regPath := curatorSetup(t)
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatal(errOut)
	}
	good, _ := os.ReadFile(regPath)
	sig, _ := os.ReadFile(regPath + ".sig")
	other, _ := curatorkey.Generate()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// One byte changed: a lower-case letter in a description.
	i := bytes.Index(good, []byte(`"description": "`)) + len(`"description": "`) + 3
	changed := bytes.Clone(good)
	changed[i] ^= 0x20
	changedPath := write("changed.json", changed)
	write("changed.json.sig", sig)
	// Signed correctly, but by a key that is not the registry's curator.
	write("stranger.json", good)
	write("stranger.json.sig", signature.Sign(good, other, time.Now()))
	// Signed by the curator, but the signature expired 47 hours ago.
	kf, err := curatorkey.ReadKeyFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	expired := time.Now().Add(-47 * time.Hour).UTC().Truncate(time.Second)
	expiredPath := write("expired.json", good)
	write("expired.json.sig", signature.SignWith(good, kf.Key, expired.Add(-30*24*time.Hour), signature.Options{Expires: expired}))
	cases := []struct {
		name string
		args []string
		says []string
	}{
		{"one byte changed", []string{changedPath}, []string{"registry bytes changed since signing", "the registry's SHA-256 is " + sha256Hex(changed), "the signature covers " + sha256Hex(good)}},
		{"different key", []string{"--pubkey", curatorkey.URI(curatorkey.Public(other)), regPath}, []string{"signed by a different key", "not by the expected " + curatorkey.Encode(curatorkey.Public(other))}},
		{"truncated signature", []string{regPath, write("truncated.sig", sig[:len(sig)/2])}, []string{"malformed signature file"}},
		{"not JSON", []string{regPath, write("text.sig", []byte("Wjp2oGMxdyxb4pDq\n"))}, []string{"malformed signature file"}},
		{"empty signature", []string{regPath, write("empty.sig", nil)}, []string{"malformed signature file: the file is empty"}},
		{"expired", []string{"--pubkey", curatorkey.URI(curatorkey.Public(kf.Key)), expiredPath}, []string{"the signature expired at " + expired.Format(time.RFC3339), "3gs sign --key-file KEY " + expiredPath}},
		{"not the curator", []string{filepath.Join(dir, "stranger.json")}, []string{"signer is not the registry's curator", "but curator.pubkey in the registry is"}},
		{"no signature", []string{write("unsigned.json", good)}, []string{"is not signed: there is no " + filepath.Join(dir, "unsigned.json.sig"), "3gs sign --key-file KEY"}},
		{"no registry", []string{filepath.Join(dir, "missing.json")}, []string{"cannot read the registry", "no such file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, _ := run(t, nil, append([]string{"verify"}, c.args...)...)
			if code != ExitFail || !strings.HasPrefix(out, "FAIL: ") || strings.Count(out, "\n") != 1 {
				t.Errorf("exit %d, output %q; want exit 1 and one FAIL line", code, out)
			}
			for _, s := range c.says {
				if !strings.Contains(out, s) {
					t.Errorf("output %q does not say %q", out, s)
				}
			}
		})
	}
	if code, _, errOut := run(t, nil, "verify", "--pubkey", "pk:placeholder", regPath); code != ExitUsage || !strings.Contains(errOut, "--pubkey is 11 characters long") {
		t.Errorf("bad --pubkey: %d %s", code, errOut)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestSignRefusals(t *testing.T) {
	dir, keyPath, _, regPath := curatorSetup(t)
	otherKey := filepath.Join(dir, "other.key")
	if code, _, _ := run(t, nil, "keygen", "--out", otherKey); code != ExitOK {
		t.Fatal("keygen")
	}
	code, _, errOut := run(t, nil, "sign", "--key-file", otherKey, regPath)
	if code != ExitFail || !strings.Contains(errOut, "refusing to sign") || !strings.Contains(errOut, "the registry's curator.pubkey is pk:") {
		t.Errorf("other key: %d %s", code, errOut)
	}
	if _, err := os.Stat(regPath + ".sig"); !os.IsNotExist(err) {
		t.Error("a refused sign wrote a signature file")
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"version":"1"}`), 0o644)
	if code, _, errOut = run(t, nil, "sign", "--key-file", keyPath, bad); code != ExitFail || !strings.Contains(errOut, "not signed: "+bad+" is not a valid registry") || !strings.Contains(errOut, "Fix: run 3gs validate "+bad) {
		t.Errorf("invalid registry: %d %s", code, errOut)
	}
	seed, _ := os.ReadFile(keyPath)
	for _, c := range []struct {
		env  map[string]string
		args []string
		says string
	}{
		{nil, []string{"sign", regPath}, "no key: pass --key-file KEY"},
		{map[string]string{"PKARR_SECRET_KEY": string(seed)}, []string{"sign", "--key-file", keyPath, regPath}, "both --key-file (THREEGS_KEY_FILE) and PKARR_SECRET_KEY are set"},
		{map[string]string{"PKARR_SECRET_KEY": "not-a-key"}, []string{"sign", regPath}, "PKARR_SECRET_KEY must be 64 hex characters"},
		{nil, []string{"sign", "--key-file", keyPath}, "name the registry file"},
		{nil, []string{"keygen"}, "--out PATH"},
	} {
		code, _, errOut := run(t, c.env, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.says) {
			t.Errorf("%v: %d %s; want exit 2 saying %q", c.args, code, errOut, c.says)
		}
		if strings.Contains(errOut, strings.TrimSpace(string(seed))) {
			t.Errorf("%v: the secret key appears in the error", c.args)
		}
	}
	// A key file others may read is refused, naming the fix; with
	// --allow-exposed-key (or its twin) it signs, with a warning.
	os.Chmod(keyPath, 0o644)
	if code, _, errOut = run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitUsage || !strings.Contains(errOut, "mode 0644") || !strings.Contains(errOut, "chmod 600") {
		t.Errorf("exposed key: %d %s", code, errOut)
	}
	if code, _, errOut = run(t, nil, "sign", "--key-file", keyPath, "--allow-exposed-key", regPath); code != ExitOK || !strings.Contains(errOut, "warning") || !strings.Contains(errOut, "chmod 600") {
		t.Errorf("exposed key, allowed: %d %s", code, errOut)
	}
	if code, _, errOut = run(t, map[string]string{"THREEGS_ALLOW_EXPOSED_KEY": "1"}, "serve", "--key-file", keyPath, "--registry", regPath, "--allow-unsigned"); code != ExitOK {
		t.Errorf("exposed key, allowed by the environment twin, serve: %d %s", code, errOut)
	}
	if code, _, errOut = run(t, nil, "serve", "--key-file", keyPath, "--registry", regPath); code != ExitFail && code != ExitUsage || !strings.Contains(errOut, "mode 0644") {
		t.Errorf("exposed key, serve: %d %s", code, errOut)
	}
}

// The registry compiled into 3gs carries its curator's signature. This
// fails when registry.json is edited without re-signing it:
// 3gs sign --key-file CURATOR_KEY registry.json
func TestEmbeddedRegistryIsSigned(t *testing.T) {
	code, out, _ := run(t, nil, "verify")
	if code != ExitOK || !strings.HasPrefix(out, "OK: signed by ") {
		t.Fatalf("3gs verify of the embedded registry: %d %s\nIf registry.json changed on purpose, its curator re-signs it: 3gs sign --key-file CURATOR_KEY registry.json", code, out)
	}
}

// serveOnce runs `3gs serve` in-process with one get_provenance call on
// stdin and returns the exit code, the call's structured result and stderr.
func serveOnce(t *testing.T, environ map[string]string, args ...string) (int, map[string]any, string) {
	t.Helper()
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_provenance","arguments":{}}}` + "\n"
	var out, errOut bytes.Buffer
	env := &Env{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return environ[k] }}
	code := Run(context.Background(), append([]string{"serve"}, args...), env)
	if code != ExitOK {
		return code, nil, errOut.String()
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var resp struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &resp); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	return code, resp.Result.StructuredContent, errOut.String()
}

func TestServeChecksTheSignature(t *testing.T) {
	dir, keyPath, pub, regPath := curatorSetup(t)

	// Unsigned although it names a real curator key: refused, as a bad
	// signature is, or deleting the .sig would let a tampered registry in.
	code, _, errOut := serveOnce(t, nil, "--registry", regPath)
	if code != ExitFail || !strings.Contains(errOut, "refusing to serve "+regPath+": it names the curator key "+pub+" but "+regPath+".sig is missing") ||
		!strings.Contains(errOut, "3gs sign --key-file KEY "+regPath) || !strings.Contains(errOut, "--allow-unsigned (THREEGS_ALLOW_UNSIGNED=1)") {
		t.Errorf("unsigned with a real key: exit %d, stderr %s", code, errOut)
	}
	// --allow-unsigned, or its twin, serves it reported as not verified.
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{nil, []string{"--registry", regPath, "--allow-unsigned"}},
		{map[string]string{"THREEGS_ALLOW_UNSIGNED": "true"}, []string{"--registry", regPath}},
	} {
		code, prov, errOut := serveOnce(t, c.env, c.args...)
		if code != ExitOK || prov["signed"] != false || prov["verified"] != false || !strings.HasPrefix(prov["signature_detail"].(string), "Unsigned: the registry names curator key "+pub) {
			t.Errorf("unsigned, %v %v: %d %v %s", c.env, c.args, code, prov, errOut)
		}
		if !strings.Contains(errOut, "(--allow-unsigned); it is reported as not verified") {
			t.Errorf("no warning on stderr: %s", errOut)
		}
	}

	// Signed: verified.
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatal(errOut)
	}
	code, prov, _ := serveOnce(t, nil, "--registry", regPath, "--key-file", keyPath)
	if code != ExitOK || prov["signed"] != true || prov["verified"] != true || prov["signed_by"] != pub {
		t.Errorf("signed: %d %v", code, prov)
	}

	// Tampered: refuses to start, saying why and what to do.
	data, _ := os.ReadFile(regPath)
	os.WriteFile(regPath, bytes.Replace(data, []byte(`"`+frozenCurator+`"`), []byte(`"3gs maintainerz"`), 1), 0o644)
	code, _, errOut = serveOnce(t, nil, "--registry", regPath)
	if code != ExitFail || !strings.Contains(errOut, "refusing to serve "+regPath+": its signature does not verify: registry bytes changed since signing") ||
		!strings.Contains(errOut, "3gs sign --key-file KEY") || !strings.Contains(errOut, "--allow-unsigned") {
		t.Errorf("tampered: exit %d, stderr %s", code, errOut)
	}
	// With --allow-unsigned (or its twin): served, reported unverified.
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{nil, []string{"--registry", regPath, "--allow-unsigned"}},
		{map[string]string{"THREEGS_ALLOW_UNSIGNED": "1"}, []string{"--registry", regPath}},
	} {
		code, prov, errOut = serveOnce(t, c.env, c.args...)
		if code != ExitOK || prov["signed"] != true || prov["verified"] != false || !strings.HasPrefix(prov["signature_detail"].(string), "NOT VERIFIED: registry bytes changed since signing") {
			t.Errorf("%v: %d %v", c.args, code, prov)
		}
		if !strings.Contains(errOut, "does not verify (--allow-unsigned)") {
			t.Errorf("no warning on stderr: %s", errOut)
		}
		if v := prov["verification"].(map[string]any); v["command"] != nil {
			t.Errorf("an unverified registry offers a verify command: %v", v)
		}
	}
	// A malformed signature file is a bad signature too.
	os.WriteFile(regPath, data, 0o644)
	os.WriteFile(regPath+".sig", []byte("{"), 0o644)
	if code, _, errOut = serveOnce(t, nil, "--registry", regPath); code != ExitFail || !strings.Contains(errOut, "malformed signature file") {
		t.Errorf("malformed .sig: %d %s", code, errOut)
	}
	os.Remove(regPath + ".sig")

	// A key that is not the curator's is refused: what it signed could
	// never verify.
	otherKey := filepath.Join(dir, "other.key")
	run(t, nil, "keygen", "--out", otherKey)
	if code, _, errOut = serveOnce(t, nil, "--registry", regPath, "--key-file", otherKey, "--allow-unsigned"); code != ExitFail || !strings.Contains(errOut, "names curator key "+pub) {
		t.Errorf("other key: %d %s", code, errOut)
	}
	if code, _, errOut = serveOnce(t, map[string]string{"PKARR_SECRET_KEY": strings.Repeat("z", 64)}, "--registry", regPath, "--allow-unsigned"); code != ExitFail || !strings.Contains(errOut, "PKARR_SECRET_KEY must be 64 hex characters") {
		t.Errorf("bad PKARR_SECRET_KEY: %d %s", code, errOut)
	}
}

// With no set-up, the embedded registry is served signed and verified.
func TestServeEmbeddedIsVerified(t *testing.T) {
	code, prov, errOut := serveOnce(t, nil)
	if code != ExitOK || prov["verified"] != true {
		t.Fatalf("%d %v %s", code, prov, errOut)
	}
	v := prov["verification"].(map[string]any)
	if !strings.HasPrefix(v["command"].(string), "3gs verify --pubkey ") || strings.Contains(v["command"].(string), "registry.json") {
		t.Errorf("embedded verify command %v; want 3gs verify --pubkey Z32 with no file names", v["command"])
	}
}

// A signed write the server was interrupted in (new registry in place, its
// signature still pending) is completed at start, not refused.
// interruptedSignedWrite leaves a curator's registry in the state a crash
// between WriteSigned's second and third steps leaves: the changed
// registry in place, its signature pending, the old signature beside it.
// It returns the registry path, the curator's key and public key, and the
// bytes before the change.
func interruptedSignedWrite(t *testing.T) (regPath string, key ed25519.PrivateKey, pub string, old []byte) {
	t.Helper()
	_, keyPath, pub, regPath := curatorSetup(t)
	kf, err := curatorkey.ReadKeyFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	old, _ = os.ReadFile(regPath)
	if _, err := signature.WriteSigned(regPath, old, kf.Key, time.Now(), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := bytes.Replace(old, []byte(`"`+frozenCurator+`"`), []byte(`"3gs curators"`), 1)
	os.WriteFile(regPath+".sig.next", signature.Sign(changed, kf.Key, time.Now()), 0o644)
	os.WriteFile(regPath, changed, 0o644)
	return regPath, kf.Key, pub, old
}

func TestServeCompletesAnInterruptedSignedWrite(t *testing.T) {
	regPath, _, _, _ := interruptedSignedWrite(t)
	code, prov, errOut := serveOnce(t, nil, "--registry", regPath)
	if code != ExitOK || prov["verified"] != true || prov["curator"].(map[string]any)["name"] != "3gs curators" {
		t.Fatalf("%d %v %s", code, prov, errOut)
	}
	if code, out, _ := run(t, nil, "verify", regPath); code != ExitOK {
		t.Errorf("after completion, verify says %s", out)
	}
}

// After a crash between the registry's rename and its signature's, verify
// (which writes nothing) checks the pair a reader should see, the new
// registry with its pending signature, and says how to finish the write,
// instead of failing until a server starts.
func TestVerifyAfterAnInterruptedSignedWrite(t *testing.T) {
	regPath, key, pub, old := interruptedSignedWrite(t)
	oldSig, _ := os.ReadFile(regPath + ".sig")
	code, out, errOut := run(t, nil, "verify", "--pubkey", pub, regPath)
	if code != ExitOK || !strings.HasPrefix(out, "OK: ") || !strings.Contains(errOut, "was interrupted") || !strings.Contains(errOut, "mv ") {
		t.Fatalf("verify: %d %q %q", code, out, errOut)
	}
	if now, _ := os.ReadFile(regPath + ".sig"); !bytes.Equal(now, oldSig) {
		t.Error("verify changed the signature file")
	}
	if _, err := os.Stat(regPath + ".sig.next"); err != nil {
		t.Errorf("verify removed the pending signature: %v", err)
	}
	// A pending signature of other bytes is stale and changes nothing.
	os.WriteFile(regPath+".sig.next", signature.Sign(old, key, time.Now()), 0o644)
	if code, out, _ := run(t, nil, "verify", regPath); code != ExitFail {
		t.Errorf("a stale pending signature made verify pass: %s", out)
	}
}

// --pubkey pins the curator: a registry re-keyed to another curator and
// validly signed by it used to be served as verified. Now it is refused
// at start, naming both keys, as is an unsigned one even with
// --allow-unsigned; the pinned curator's own copy is served.
func TestServePinsThePubkey(t *testing.T) {
	_, keyPath, pub, regPath := curatorSetup(t)
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatal(errOut)
	}
	if code, prov, errOut := serveOnce(t, nil, "--registry", regPath, "--pubkey", pub); code != ExitOK || prov["verified"] != true {
		t.Fatalf("the pinned curator's registry: %d %v %s", code, prov, errOut)
	}
	if code, prov, errOut := serveOnce(t, map[string]string{"THREEGS_PUBKEY": pub}, "--registry", regPath); code != ExitOK || prov["verified"] != true {
		t.Fatalf("THREEGS_PUBKEY: %d %v %s", code, prov, errOut)
	}

	// An attacker re-keys the registry to their own key and signs it,
	// starting a log of their own: 3gs sign refuses to extend a log signed
	// by another key.
	_, otherKey, otherPub, _ := curatorSetup(t)
	data, _ := os.ReadFile(regPath)
	os.WriteFile(regPath, bytes.Replace(data, []byte(pub), []byte(otherPub), 1), 0o644)
	if code, _, errOut := run(t, nil, "sign", "--key-file", otherKey, regPath); code != ExitFail || !strings.Contains(errOut, "does not verify at seq 1") || !strings.Contains(errOut, "if the curator key changed") {
		t.Fatalf("signing over a log signed by another key: %d %s", code, errOut)
	}
	os.Remove(regPath + ".audit.jsonl")
	if code, _, errOut := run(t, nil, "sign", "--key-file", otherKey, regPath); code != ExitOK {
		t.Fatal(errOut)
	}
	if code, prov, _ := serveOnce(t, nil, "--registry", regPath); code != ExitOK || prov["verified"] != true {
		t.Fatalf("without --pubkey the re-keyed file verifies under the key it names: %d %v", code, prov)
	}
	code, _, errOut := serveOnce(t, nil, "--registry", regPath, "--pubkey", pub)
	if code != ExitFail || !strings.Contains(errOut, "trusts only registries signed by "+pub) || !strings.Contains(errOut, "signed by "+otherPub) {
		t.Errorf("re-keyed, with --pubkey: %d %s", code, errOut)
	}
	os.Remove(regPath + ".sig")
	code, _, errOut = serveOnce(t, nil, "--registry", regPath, "--pubkey", pub, "--allow-unsigned")
	if code != ExitFail || !strings.Contains(errOut, "no signature file") {
		t.Errorf("unsigned, with --pubkey and --allow-unsigned: %d %s", code, errOut)
	}
	if code, _, errOut := serveOnce(t, nil, "--registry", regPath, "--pubkey", "pk:nonsense"); code != ExitUsage || !strings.Contains(errOut, "--pubkey (THREEGS_PUBKEY)") {
		t.Errorf("a malformed --pubkey: %d %s", code, errOut)
	}
}

// A change that would make the registry too large is worded with the
// setting that raises the limit: the registry package says only sizes.
func TestLoadProblemNamesTheRegistryLimit(t *testing.T) {
	got := loadProblem(fmt.Errorf("wrapped: %w", &registry.TooLargeError{Size: 2000, Limit: 1000})).Error()
	if !strings.Contains(got, "registry is 2000 bytes, more than the 1000-byte limit (--max-registry-bytes, THREEGS_MAX_REGISTRY_BYTES)") {
		t.Errorf("loadProblem: %q", got)
	}
}
