package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/signature"
)

// deployment is a working setup: a registry signed by its curator, the
// key, and a tokens file with an admin token.
func deployment(t *testing.T) (args []string, regPath, keyPath, tokens string) {
	t.Helper()
	_, keyPath, _, regPath = curatorSetup(t)
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatalf("sign: %s", errOut)
	}
	tokens = filepath.Join(filepath.Dir(regPath), "tokens.json")
	if code, _, errOut := run(t, nil, "token", "new", "--tokens", tokens, "--tier", "admin", "--name", "root"); code != ExitOK {
		t.Fatalf("token new: %s", errOut)
	}
	return []string{"doctor", "--registry", regPath, "--key-file", keyPath, "--tokens", tokens, "--http", "127.0.0.1:0"}, regPath, keyPath, tokens
}

// lines maps each check to its report line.
func lines(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if _, rest, ok := strings.Cut(l, "  "); ok {
			check, _, _ := strings.Cut(strings.TrimSpace(rest), ":")
			m[check] = l
		}
	}
	return m
}

func TestDoctorHealthyDeployment(t *testing.T) {
	args, _, _, _ := deployment(t)
	code, out, errOut := run(t, nil, args...)
	if code != ExitOK || strings.Contains(out, "WARN") || strings.Contains(out, "FAIL") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, check := range []string{"flags", "registry", "signature", "key", "tokens", "editing", "http"} {
		if !strings.HasPrefix(lines(out)[check], "OK    "+check+": ") {
			t.Errorf("no OK line for %s in:\n%s", check, out)
		}
	}
}

// A fresh install, no flags, no files: doctor passes, as serve serves the
// embedded registry there, whatever its signature's expiry (a curator's
// fresh signature expires; the shipped one may not).
func TestDoctorFreshInstall(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	code, out, errOut := run(t, nil, "doctor")
	if code != ExitOK || strings.Contains(out, "FAIL") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.HasPrefix(lines(out)["expiry"], "OK    expiry: ") {
		t.Errorf("no OK expiry line for the embedded registry in:\n%s", out)
	}
}

// A stale signature (here one that never expires) is OK on the embedded
// registry and fails on a registry file, as serve treats them.
func TestDoctorEmbeddedExemptFromExpiry(t *testing.T) {
	stale := signature.Status{Verified: true}
	for _, c := range []struct {
		regName string
		want    verdict
	}{{"", ok}, {"registry.json", fail}} {
		d := &doctor{o: &serveOptions{}}
		d.expiry(stale, c.regName)
		if len(d.findings) != 1 || d.findings[0].v != c.want {
			t.Errorf("registry %q: findings %+v, want one with verdict %v", c.regName, d.findings, c.want)
		}
	}
}

// Every misconfiguration the issue names is explained, with its fix, and
// fails the run.
func TestDoctorExplainsMisconfigurations(t *testing.T) {
	for _, c := range []struct {
		name         string
		misconfigure func(t *testing.T, args []string, regPath, keyPath, tokens string) []string
		check        string
		want         []string
	}{
		{"wrong registry path", func(t *testing.T, args []string, regPath, _, _ string) []string {
			return replaceArg(args, regPath, regPath+".missing")
		}, "registry", []string{"FAIL", "does not exist", "Fix: check --registry (REGISTRY_PATH)"}},
		{"tampered registry", func(t *testing.T, args []string, regPath, _, _ string) []string {
			data, _ := os.ReadFile(regPath)
			os.WriteFile(regPath, []byte(strings.Replace(string(data), "Learning Rust", "Learning Rust!", 1)), 0o644)
			return args
		}, "signature", []string{"FAIL", "does not verify", "changed after signing", "Fix: if the change is the curator's, re-sign: 3gs sign --key-file KEY"}},
		{"signature removed", func(t *testing.T, args []string, regPath, _, _ string) []string {
			os.Remove(regPath + ".sig")
			return args
		}, "signature", []string{"FAIL", "names a curator key but is not signed, and serve refuses it", "Fix: 3gs sign --key-file KEY", "--allow-unsigned"}},
		{"world-readable key", func(t *testing.T, args []string, _, keyPath, _ string) []string {
			os.Chmod(keyPath, 0o644)
			return args
		}, "key", []string{"FAIL", "readable by other users", "Fix: chmod 600 /"}},
		{"malformed tokens file", func(t *testing.T, args []string, _, _, tokens string) []string {
			os.WriteFile(tokens, []byte(`{"tokens":[{"name":"root","tier":"superuser"}]}`), 0o600)
			return args
		}, "tokens", []string{"FAIL", "tier", "Fix: correct what is named, or restore the file from a backup"}},
		{"port in use", func(t *testing.T, args []string, _, _, _ string) []string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			return replaceArg(args, "127.0.0.1:0", ln.Addr().String())
		}, "http", []string{"FAIL", "cannot listen on 127.0.0.1:", "address already in use", "Fix: choose another port with --http (THREEGS_HTTP)"}},
		{"key of another curator", func(t *testing.T, args []string, _, keyPath, _ string) []string {
			other := filepath.Join(t.TempDir(), "other.key")
			run(t, nil, "keygen", "--out", other)
			return replaceArg(args, keyPath, other)
		}, "key", []string{"FAIL", "but the registry names curator", "Fix: use the curator's key"}},
		{"bad flag value", func(t *testing.T, args []string, _, _, _ string) []string {
			return append(args, "--match-threshold", "2")
		}, "flags", []string{"FAIL", "--match-threshold", "Fix: correct the flag"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args, regPath, keyPath, tokens := deployment(t)
			args = c.misconfigure(t, args, regPath, keyPath, tokens)
			code, out, errOut := run(t, nil, args...)
			if code != ExitFail {
				t.Errorf("exit %d, want 1\n%s%s", code, out, errOut)
			}
			line := lines(out)[c.check]
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("the %s line lacks %q:\n%s", c.check, w, out)
				}
			}
		})
	}
}

func replaceArg(args []string, old, new string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == old {
			out[i] = new
		}
	}
	return out
}

// With --allow-unsigned, a missing signature is a warning, not a failure:
// serve will start, reporting the registry as not verified.
func TestDoctorAllowUnsigned(t *testing.T) {
	args, regPath, _, _ := deployment(t)
	os.Remove(regPath + ".sig")
	code, out, _ := run(t, nil, append(args, "--allow-unsigned")...)
	if l := lines(out)["signature"]; code != ExitOK || !strings.Contains(l, "WARN") || !strings.Contains(l, "--allow-unsigned serves it marked not verified") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// A server started without the curator key serves a registry whose
// signature runs out, and nothing renews it: doctor warns, says when, and
// names the three ways out. Given the key, the same registry is OK.
func TestDoctorWarnsAKeylessServerOfExpiry(t *testing.T) {
	keyPath, regPath, _, _ := initNode(t, "Tester")
	code, out, errOut := run(t, nil, "doctor", "--registry", regPath)
	l := lines(out)["expiry"]
	if code != ExitOK || !strings.HasPrefix(l, "WARN  expiry: ") {
		t.Fatalf("doctor without a key: exit %d, expiry line %q\n%s%s", code, l, out, errOut)
	}
	for _, want := range []string{"expires on ", "in 29 days", "no curator key", "--key-file", "LoadCredential=", "3gs sign --key-file KEY " + regPath + " --expires SPAN", "--follow URL --follow-pubkey KEY"} {
		if !strings.Contains(l, want) {
			t.Errorf("the expiry line lacks %q: %s", want, l)
		}
	}
	code, out, _ = run(t, nil, "doctor", "--registry", regPath, "--key-file", keyPath)
	if l := lines(out)["expiry"]; code != ExitOK || !strings.HasPrefix(l, "OK    expiry: the signature is valid until ") {
		t.Errorf("doctor with the key: exit %d\n%s", code, out)
	}
	data, _ := os.ReadFile(keyPath)
	code, out, _ = run(t, map[string]string{"PKARR_SECRET_KEY": strings.TrimSpace(string(data))}, "doctor", "--registry", regPath)
	if l := lines(out)["expiry"]; code != ExitOK || !strings.HasPrefix(l, "OK    expiry: ") {
		t.Errorf("doctor with PKARR_SECRET_KEY: exit %d\n%s", code, out)
	}
}
