package tools

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// signedRegistry writes our registry, re-keyed to a new curator key and
// signed with it, into dir (a path with a space, so quoting is exercised),
// and returns handlers serving it the way `3gs serve --registry` does.
func signedRegistry(t *testing.T, dir string) (*Handlers, string) {
	t.Helper()
	key, err := curatorkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	data := testkit.WithCurator(frozen.Registry(frozen.Basic), curatorkey.URI(curatorkey.Public(key)))
	regPath := filepath.Join(dir, "my registry.json")
	if err := os.WriteFile(regPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(regPath+".sig", signature.Sign(data, key, time.Now()), 0o644); err != nil {
		t.Fatal(err)
	}
	return servedFrom(t, regPath), regPath
}

func servedFrom(t *testing.T, regPath string) *Handlers {
	t.Helper()
	data, err := os.ReadFile(regPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := os.ReadFile(regPath + ".sig")
	h, _ := serving(t, data, doc, Config{Files: signature.Files{Registry: regPath, Signature: regPath + ".sig", Where: "test"}})
	return h
}

func provenance(t *testing.T, h *Handlers) *gen.GetProvenanceOutput {
	t.Helper()
	out, err := h.GetProvenance(context.Background(), &gen.GetProvenanceInput{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFollowVerificationSteps does, in Go, exactly what each printed shell
// step says, reading every file name, key and constant out of the printed
// command itself. A step this test cannot read fails it, so the printed
// instructions and this check cannot drift apart.
func TestFollowVerificationSteps(t *testing.T) {
	dir := t.TempDir()
	h, regPath := signedRegistry(t, dir)
	out := provenance(t, h)
	if !out.Signed || !out.Verified || len(out.Verification.Steps) == 0 {
		t.Fatalf("not a verified registry: %+v", out)
	}
	if err := followSteps(dir, out.Verification.Steps); err != nil {
		t.Fatalf("following the printed steps: %v", err)
	}
	text := h.GetProvenanceText(out)
	for _, s := range out.Verification.Steps {
		if !strings.Contains(text, "$ "+s.Run+"\n") {
			t.Errorf("the text does not print step %q", s.Run)
		}
	}

	// The same steps, against a registry changed after signing, must fail.
	data, _ := os.ReadFile(regPath)
	os.WriteFile(regPath, bytes.Replace(data, []byte("Rust"), []byte("Rusk"), 1), 0o644)
	if err := followSteps(dir, out.Verification.Steps); err == nil || !strings.Contains(err.Error(), "step 1") {
		t.Errorf("the steps accept a changed registry: %v", err)
	}
}

// remoteProvenance serves the signed registry's two files over HTTP at
// /registry and /registry.sig, as 3gs serve --http does, and returns the
// provenance a client of that server gets.
func remoteProvenance(t *testing.T, h *Handlers, regPath string) *gen.GetProvenanceOutput {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/registry":
			http.ServeFile(w, r, regPath)
		case "/registry.sig":
			http.ServeFile(w, r, regPath+".sig")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	out, err := h.GetProvenance(auth.WithBaseURL(context.Background(), ts.URL), &gen.GetProvenanceInput{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFollowRemoteVerificationSteps: a client of an HTTP server gets steps
// that download the files first, and following them verifies; once the
// served file changes, they fail at the digest.
func TestFollowRemoteVerificationSteps(t *testing.T) {
	h, regPath := signedRegistry(t, t.TempDir())
	out := remoteProvenance(t, h, regPath)
	if !strings.HasPrefix(out.Verification.Steps[0].Run, "curl ") || !strings.Contains(out.Verification.Where, "/registry.sig") {
		t.Fatalf("remote steps do not download: %+v", out.Verification)
	}
	work := t.TempDir()
	if err := followSteps(work, out.Verification.Steps); err != nil {
		t.Fatalf("following the printed steps: %v", err)
	}
	data, _ := os.ReadFile(regPath)
	os.WriteFile(regPath, bytes.Replace(data, []byte("Rust"), []byte("Rusk"), 1), 0o644)
	if err := followSteps(work, out.Verification.Steps); err == nil || !strings.Contains(err.Error(), "step 3") {
		t.Errorf("the steps accept a changed registry: %v", err)
	}
}

// TestShellVerificationSteps runs the printed steps in a real POSIX shell
// with the real tools, when the machine has them.
func TestShellVerificationSteps(t *testing.T) {
	for _, tool := range []string{"sh", "sha256sum", "jq", "base64", "base32", "tr", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed; TestFollowVerificationSteps checks the same steps in Go", tool)
		}
	}
	for _, remote := range []bool{false, true} {
		if remote {
			if _, err := exec.LookPath("curl"); err != nil {
				t.Log("curl is not installed; the download steps are checked in Go by TestFollowRemoteVerificationSteps")
				continue
			}
		}
		dir := t.TempDir()
		h, regPath := signedRegistry(t, dir)
		out := provenance(t, h)
		if remote {
			out = remoteProvenance(t, h, regPath)
			dir = t.TempDir()
		}
		if err := runShellSteps(dir, out.Verification.Steps); err != nil {
			t.Fatalf("remote %v: %v", remote, err)
		}
		data, _ := os.ReadFile(regPath)
		os.WriteFile(regPath, bytes.Replace(data, []byte("Rust"), []byte("Rusk"), 1), 0o644)
		if err := runShellSteps(dir, out.Verification.Steps); err == nil {
			t.Errorf("remote %v: the shell steps accept a changed registry", remote)
		}
	}
}

// runShellSteps runs each printed command in sh, in dir, and checks its
// output against what the step says to expect.
func runShellSteps(dir string, steps []gen.VerificationStep) error {
	for i, s := range steps {
		cmd := exec.Command("sh", "-c", s.Run)
		cmd.Dir = dir
		got, err := cmd.CombinedOutput()
		if err != nil {
			return &stepError{i + 1, s.Run + ": " + err.Error() + ": " + string(got)}
		}
		if !strings.HasPrefix(s.Expect, "no output") && !strings.Contains(string(got), s.Expect) {
			return &stepError{i + 1, "printed " + strconv.Quote(string(got)) + ", want " + s.Expect}
		}
	}
	return nil
}

type stepError struct {
	n   int
	msg string
}

func (e *stepError) Error() string { return "step " + strconv.Itoa(e.n) + ": " + e.msg }

var (
	stepSHA256   = regexp.MustCompile(`^sha256sum (.+)$`)
	stepJQField  = regexp.MustCompile(`^jq -r \.(\w+) (.+)$`)
	stepJQBase64 = regexp.MustCompile(`^jq -r \.(\w+) (.+) \| base64 -d > (\S+)$`)
	stepKeyDER   = regexp.MustCompile(`^\{ printf '((?:\\[0-7]{3})+)'; printf '%s(=*)' (\S+) \| tr '(\S+)' '(\S+)' \| base32 -d; \} > (\S+)$`)
	stepCurl     = regexp.MustCompile(`^curl -fsS -o (\S+) (\S+)$`)
	stepJQText   = regexp.MustCompile(`^jq -j '.+' ('[^']*'|\S+) > (\S+)$`)
	stepExpiry   = regexp.MustCompile(`^jq -r '(.+)' ('[^']*'|\S+)$`)
	stepOpenSSL  = regexp.MustCompile(`^openssl pkeyutl -verify -pubin -keyform DER -inkey (\S+) -rawin -in (.+) -sigfile (\S+)$`)
)

// followSteps performs each step's command with Go code, in dir.
func followSteps(dir string, steps []gen.VerificationStep) error {
	at := func(p string) string {
		p = unquote(p)
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	for i, s := range steps {
		fail := func(msg string) error { return &stepError{i + 1, msg} }
		switch {
		case stepCurl.MatchString(s.Run):
			m := stepCurl.FindStringSubmatch(s.Run)
			resp, err := http.Get(unquote(m[2]))
			if err != nil {
				return fail(err.Error())
			}
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK { // curl -f fails on an error status
				return fail("curl: " + resp.Status)
			}
			if err := os.WriteFile(at(m[1]), data, 0o644); err != nil {
				return fail(err.Error())
			}
		case stepJQText.MatchString(s.Run):
			// The statement a signature with an expiry covers, rebuilt from
			// the signature file as the jq program does (the shell test
			// runs the program itself).
			m := stepJQText.FindStringSubmatch(s.Run)
			data, err := os.ReadFile(at(m[1]))
			if err != nil {
				return fail(err.Error())
			}
			sig, err := signature.Parse(data)
			if err != nil || sig.Expires == nil {
				return fail("jq: not a signature with an expiry")
			}
			if err := os.WriteFile(at(m[2]), signature.Statement(sig), 0o644); err != nil {
				return fail(err.Error())
			}
		case stepExpiry.MatchString(s.Run):
			// The expiry compared with the clock, as the jq program does
			// (the shell test runs the program itself).
			m := stepExpiry.FindStringSubmatch(s.Run)
			if m[1] != signature.ExpiryJQ {
				return fail("an expiry program this test does not know: " + m[1])
			}
			data, err := os.ReadFile(at(m[2]))
			if err != nil {
				return fail(err.Error())
			}
			sig, err := signature.Parse(data)
			if err != nil || sig.Expires == nil {
				return fail("jq: not a signature with an expiry")
			}
			exp := *sig.Expires
			text := exp.UTC().Format(time.RFC3339) // the file's text: its pattern allows no other
			got := "EXPIRED at " + text
			if exp.After(time.Now()) {
				got = signature.ExpiryInForce + " " + text
			}
			if !strings.Contains(got, s.Expect) {
				return fail("jq prints " + got + ", want " + s.Expect)
			}
		case stepJQBase64.MatchString(s.Run):
			m := stepJQBase64.FindStringSubmatch(s.Run)
			field, err := jsonField(at(m[2]), m[1])
			if err != nil {
				return fail(err.Error())
			}
			raw, err := base64.StdEncoding.DecodeString(field)
			if err != nil {
				return fail("base64 -d: " + err.Error())
			}
			if err := os.WriteFile(at(m[3]), raw, 0o644); err != nil {
				return fail(err.Error())
			}
		case stepJQField.MatchString(s.Run):
			m := stepJQField.FindStringSubmatch(s.Run)
			field, err := jsonField(at(m[2]), m[1])
			if err != nil {
				return fail(err.Error())
			}
			if field != s.Expect {
				return fail("jq prints " + field + ", want " + s.Expect)
			}
		case stepSHA256.MatchString(s.Run):
			data, err := os.ReadFile(at(stepSHA256.FindStringSubmatch(s.Run)[1]))
			if err != nil {
				return fail(err.Error())
			}
			sum := sha256.Sum256(data)
			if got := hex.EncodeToString(sum[:]); got != s.Expect {
				return fail("sha256sum prints " + got + ", want " + s.Expect)
			}
		case stepKeyDER.MatchString(s.Run):
			m := stepKeyDER.FindStringSubmatch(s.Run)
			var prefix []byte
			for _, oct := range strings.Split(m[1], `\`)[1:] {
				b, _ := strconv.ParseUint(oct, 8, 8)
				prefix = append(prefix, byte(b))
			}
			if len(m[4]) != 32 || len(m[5]) != 32 {
				return fail("tr sets are not 32 characters each")
			}
			translated := strings.Map(func(r rune) rune {
				if j := strings.IndexRune(m[4], r); j >= 0 {
					return rune(m[5][j])
				}
				return r
			}, m[3]+m[2])
			key, err := base32.StdEncoding.DecodeString(translated)
			if err != nil {
				return fail("base32 -d: " + err.Error())
			}
			if err := os.WriteFile(at(m[6]), append(prefix, key...), 0o644); err != nil {
				return fail(err.Error())
			}
		case stepOpenSSL.MatchString(s.Run):
			m := stepOpenSSL.FindStringSubmatch(s.Run)
			der, err := os.ReadFile(at(m[1]))
			if err != nil {
				return fail(err.Error())
			}
			// The standard library's DER parser stands in for openssl's:
			// the file must be a well-formed Ed25519 public key.
			pub, err := x509.ParsePKIXPublicKey(der)
			if err != nil {
				return fail("openssl cannot read the key: " + err.Error())
			}
			edPub, ok := pub.(ed25519.PublicKey)
			if !ok {
				return fail("the DER key is not Ed25519")
			}
			data, err := os.ReadFile(at(m[2]))
			if err != nil {
				return fail(err.Error())
			}
			sig, err := os.ReadFile(at(m[3]))
			if err != nil {
				return fail(err.Error())
			}
			if !ed25519.Verify(edPub, data, sig) {
				return fail("Signature Verification Failure")
			}
			if s.Expect != "Signature Verified Successfully" {
				return fail("expects " + s.Expect)
			}
		default:
			return fail("this test does not know how to follow " + strconv.Quote(s.Run) + "; teach followSteps the new command")
		}
	}
	return nil
}

func jsonField(path, name string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return "", err
	}
	s, _ := m[name].(string)
	return s, nil
}

// unquote undoes signature.ShellQuote.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], `'\''`, `'`)
	}
	return s
}

func TestProvenanceStates(t *testing.T) {
	dir := t.TempDir()
	h, regPath := signedRegistry(t, dir)
	out := provenance(t, h)
	if out.Verification.Command == nil || *out.Verification.Command != "3gs verify --pubkey "+strings.TrimPrefix(out.Curator.Pubkey, "pk:")+" '"+regPath+"' '"+regPath+".sig'" {
		t.Errorf("verify command %v", out.Verification.Command)
	}
	if out.SignedBy == nil || *out.SignedBy != out.Curator.Pubkey || out.SignedAt == nil || !out.PubkeyConfigured {
		t.Errorf("signed_by %v signed_at %v configured %v", out.SignedBy, out.SignedAt, out.PubkeyConfigured)
	}

	// Changed after signing, served with --allow-unsigned: not verified.
	data, _ := os.ReadFile(regPath)
	os.WriteFile(regPath, bytes.Replace(data, []byte("Rust"), []byte("Rusk"), 1), 0o644)
	out = provenance(t, servedFrom(t, regPath))
	if !out.Signed || out.Verified || !strings.Contains(out.SignatureDetail, "NOT VERIFIED: registry bytes changed since signing") || out.Verification.Command != nil {
		t.Errorf("tampered: %+v", out)
	}
	if text := h.GetProvenanceText(out); !strings.Contains(text, "Signature: present but NOT VERIFIED") {
		t.Errorf("tampered text:\n%s", text)
	}

	// No signature file.
	os.Remove(regPath + ".sig")
	out = provenance(t, servedFrom(t, regPath))
	if out.Signed || out.Verified || out.SignedBy != nil || !strings.HasPrefix(out.SignatureDetail, "Unsigned: the registry names curator key") {
		t.Errorf("unsigned: %+v", out)
	}
	if len(out.Verification.Steps) != 1 || !strings.HasPrefix(out.Verification.Steps[0].Run, "sha256sum ") {
		t.Errorf("unsigned steps: %+v", out.Verification.Steps)
	}

	// Placeholder key: says so, never invents one.
	fix := handlers(t, testkit.WithCurator(frozen.Registry(frozen.Basic), registry.Placeholder))
	out = provenance(t, fix)
	if out.PubkeyConfigured || out.Signed || !strings.Contains(out.SignatureDetail, "no curator key yet") {
		t.Errorf("placeholder: %+v", out)
	}
	if text := fix.GetProvenanceText(out); !strings.Contains(text, "Public Key: none yet (pk:placeholder)") || !strings.Contains(text, "$ sha256sum registry.json\n") {
		t.Errorf("placeholder text:\n%s", text)
	}
}
