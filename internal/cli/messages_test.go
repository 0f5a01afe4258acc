package cli

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/registry"
)

// expect runs 3gs and checks the exit code and that stderr says every
// want and none of the wrong advice in avoid.
func expect(t *testing.T, environ map[string]string, args []string, code int, want, avoid []string) string {
	t.Helper()
	got, _, stderr := run(t, environ, args...)
	if got != code {
		t.Errorf("%v: exit %d, want %d\n%s", args, got, code, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("%v: stderr lacks %q:\n%s", args, w, stderr)
		}
	}
	for _, a := range avoid {
		if strings.Contains(stderr, a) {
			t.Errorf("%v: stderr says %q, which does not fit:\n%s", args, a, stderr)
		}
	}
	return stderr
}

// A malformed --http is a usage error that names the forms accepted; a
// port out of range says so; only a port in use blames another server.
func TestServeHTTPAddressMessages(t *testing.T) {
	forms := []string{"HOST:PORT", ":PORT for every interface", "a port alone for 127.0.0.1"}
	for _, c := range []struct {
		http        string
		want, avoid []string
	}{
		{"99999", []string{"port 99999 is out of range (1-65535)"}, []string{"port alone", "HOST:PORT", "another server"}},
		{"127.0.0.1:70000", []string{"port 70000 is out of range (1-65535)"}, []string{"port alone", "another server"}},
		{":abc", append([]string{`":abc" has no port number`}, forms...), []string{"another server", "out of range"}},
		{"127.0.0.1:", append([]string{"has no port number"}, forms...), nil},
		{"::1", append([]string{`"::1" is not an address to listen on`}, forms...), nil},
		{"mcp.example.com", append([]string{"is not an address to listen on"}, forms...), nil},
	} {
		expect(t, nil, []string{"serve", "--http", c.http}, ExitUsage, c.want, c.avoid)
	}

	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	expect(t, nil, []string{"serve", "--http", held.Addr().String()}, ExitFail,
		[]string{"cannot listen on " + held.Addr().String(), "address already in use", "stop the other server listening there"}, nil)
	// 192.0.2.0/24 is reserved for documentation: no machine has it.
	expect(t, nil, []string{"serve", "--http", "192.0.2.1:3000"}, ExitFail,
		[]string{"cannot listen on 192.0.2.1:3000", "not an address of this machine"}, []string{"other server"})

	_, out, _ := run(t, nil, "doctor", "--http", "99999")
	if !strings.Contains(lines(out)["flags"], "port 99999 is out of range (1-65535)") {
		t.Errorf("doctor --http 99999:\n%s", out)
	}
}

// Only a registry that was read but breaks the rules is one for 3gs
// validate; a missing or unreadable file gets the fix that fits it.
func TestRegistryLoadMessages(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	invalid := filepath.Join(dir, "invalid.json")
	if err := os.WriteFile(invalid, []byte(`{"version":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "curator.key")
	if code, _, errOut := run(t, nil, "keygen", "--out", keyPath); code != ExitOK {
		t.Fatalf("keygen: %s", errOut)
	}
	for _, c := range []struct {
		args        []string
		want, avoid []string
	}{
		{[]string{"serve", "--registry", missing}, []string{missing + " does not exist", "Fix: check --registry (REGISTRY_PATH)", "or omit it to serve the embedded registry"}, []string{"validate"}},
		{[]string{"serve", "--http", "127.0.0.1:0", "--registry", missing}, []string{missing + " does not exist", "omit it to serve the embedded registry"}, []string{"validate"}},
		{[]string{"serve", "--registry", dir}, []string{"is a directory", "check that " + dir + " is the registry file"}, []string{"validate", "does not exist"}},
		{[]string{"serve", "--registry", invalid}, []string{invalid + " is not a valid registry", "run 3gs validate " + invalid}, []string{"does not exist"}},
		{[]string{"query", "--registry", missing, "rust"}, []string{missing + " does not exist", "omit it to match against the embedded registry"}, []string{"validate"}},
		{[]string{"query", "--registry", invalid, "rust"}, []string{"is not a valid registry", "3gs validate"}, nil},
		{[]string{"sign", "--key-file", keyPath, missing}, []string{"not signed: " + missing + " does not exist", "Fix: check the path"}, []string{"validate", "not a valid registry", "--registry"}},
	} {
		expect(t, nil, c.args, ExitFail, c.want, c.avoid)
	}
	_, out, _ := run(t, nil, "doctor", "--registry", dir)
	if l := lines(out)["registry"]; !strings.Contains(l, "is a directory") || strings.Contains(l, "validate") || strings.Contains(l, "readable") {
		t.Errorf("doctor, registry is a directory: %s", l)
	}

	// Permission denied, made up: root, which runs some CI, reads
	// everything, so the real case below only runs for other users.
	denied := &fs.PathError{Op: "open", Path: missing, Err: syscall.EACCES}
	problem, fix := registryProblem(missing, denied, "serve the embedded registry")
	if problem != "cannot read "+missing+": permission denied" || !strings.Contains(fix, "read access") || strings.Contains(fix, "validate") {
		t.Errorf("permission denied: %q, fix %q", problem, fix)
	}
	if os.Geteuid() != 0 {
		locked := filepath.Join(dir, "locked.json")
		os.WriteFile(locked, frozen.Registry(frozen.Basic), 0)
		expect(t, nil, []string{"serve", "--registry", locked}, ExitFail, []string{"cannot read " + locked + ": permission denied", "read access"}, []string{"validate"})
	}
}

// A tokens file that cannot be read or is damaged is reported with its
// path and cause, and a fix that keeps its tokens; only a missing one
// calls for 3gs token new.
func TestTokensFileMessages(t *testing.T) {
	dir := t.TempDir()
	garbled := filepath.Join(dir, "garbled.json")
	os.WriteFile(garbled, []byte("not json"), 0o600)
	wrongTier := filepath.Join(dir, "tier.json")
	os.WriteFile(wrongTier, []byte(`{"tokens":[{"name":"root","tier":"superuser","sha256":"`+strings.Repeat("0", 64)+`","created":"2026-01-01T00:00:00Z"}]}`), 0o600)
	newAdvice := []string{"token new", "make a new one", "start a new one"}
	for _, path := range []string{garbled, wrongTier} {
		expect(t, nil, []string{"serve", "--tokens", path}, ExitFail,
			[]string{"3gs serve: --tokens (THREEGS_TOKENS): " + path + " is not a valid tokens file: ", "Fix: correct what is named, or restore the file from a backup"}, newAdvice)
		_, out, _ := run(t, nil, "doctor", "--tokens", path)
		if l := lines(out)["tokens"]; !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "restore the file from a backup") || strings.Contains(l, "token new") {
			t.Errorf("doctor, %s: %s", path, l)
		}
	}
	expect(t, nil, []string{"serve", "--tokens", dir}, ExitFail, []string{"is a directory", "Fix: check that --tokens (THREEGS_TOKENS) names the tokens file itself"}, newAdvice)

	missing := filepath.Join(dir, "missing.json")
	stderr := expect(t, nil, []string{"serve", "--tokens", missing}, ExitOK,
		[]string{"level=WARN", "the tokens file does not exist", "file=" + missing, "3gs token new --tokens " + missing}, nil)
	if strings.Contains(stderr, "tokens loaded") && !strings.Contains(stderr, "does not exist") {
		t.Errorf("a missing tokens file is reported as loaded:\n%s", stderr)
	}
	_, out, _ := run(t, nil, "doctor", "--tokens", missing)
	if l := lines(out)["tokens"]; !strings.HasPrefix(l, "WARN") || !strings.Contains(l, missing+" does not exist") || !strings.Contains(l, "3gs token new --tokens") {
		t.Errorf("doctor, missing tokens file: %s", l)
	}

	denied := &fs.PathError{Op: "open", Path: garbled, Err: syscall.EACCES}
	problem, fix := app.TokensProblem(garbled, fmt.Errorf("reading: %w", denied))
	if problem != "cannot read "+garbled+": permission denied" || !strings.Contains(fix, "chmod 600") || strings.Contains(fix, "token new") {
		t.Errorf("permission denied: %q, fix %q", problem, fix)
	}
	if os.Geteuid() != 0 {
		locked := filepath.Join(dir, "locked.json")
		os.WriteFile(locked, []byte(`{"tokens":[]}`), 0)
		expect(t, nil, []string{"serve", "--tokens", locked}, ExitFail, []string{"cannot read " + locked + ": permission denied", "chmod 600"}, newAdvice)
	}
}

// THREEGS_TOKEN that no token in the file matches is reported at start,
// naming the file and never the token.
func TestSessionTokenDiagnostics(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	code, known, errOut := run(t, nil, "token", "new", "--tokens", tokens, "--tier", "user", "--name", "alice")
	if code != ExitOK {
		t.Fatalf("token new: %s", errOut)
	}
	known = strings.TrimSpace(known)
	unknown, err := auth.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	const mismatch = "THREEGS_TOKEN matches no token in the tokens file"
	stderr := expect(t, map[string]string{stdioTokenEnv: unknown}, []string{"serve", "--tokens", tokens}, ExitOK,
		[]string{"level=WARN", mismatch, "file=" + tokens, "3gs token list --tokens " + tokens}, []string{unknown})
	if strings.Count(stderr, mismatch) != 1 {
		t.Errorf("want one warning:\n%s", stderr)
	}
	expect(t, map[string]string{stdioTokenEnv: known}, []string{"serve", "--tokens", tokens}, ExitOK, nil, []string{mismatch, known})
	expect(t, map[string]string{stdioTokenEnv: unknown}, []string{"serve"}, ExitOK,
		[]string{"level=WARN", "THREEGS_TOKEN is set but no --tokens file is given"}, []string{unknown})

	_, out, _ := run(t, map[string]string{stdioTokenEnv: unknown}, "doctor", "--tokens", tokens)
	if l := lines(out)["tokens"]; !strings.HasPrefix(l, "WARN") || !strings.Contains(l, "THREEGS_TOKEN matches none of them") || strings.Contains(out, unknown) {
		t.Errorf("doctor, unknown THREEGS_TOKEN: %s", l)
	}
	_, out, _ = run(t, map[string]string{stdioTokenEnv: known}, "doctor", "--tokens", tokens)
	if l := lines(out)["tokens"]; !strings.HasPrefix(l, "OK") {
		t.Errorf("doctor, known THREEGS_TOKEN: %s", l)
	}
	_, out, _ = run(t, map[string]string{stdioTokenEnv: known}, "doctor", "--tokens", tokens, "--http", "127.0.0.1:0")
	if !strings.Contains(out, "WARN  tokens: THREEGS_TOKEN is set but only a stdio server reads it. Fix: over HTTP each client sends its own token") {
		t.Errorf("doctor, THREEGS_TOKEN with --http:\n%s", out)
	}
}

// 3gs query prints the matched category's sources as get_sources gives
// them to an agent: rank, name, URL, type and why.
func TestQueryPrintsSources(t *testing.T) {
	path := frozenRegistry(t)
	code, out, errOut := run(t, nil, "query", "--registry", path, "postfix", "mail", "setup")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	reg, err := registry.Load(frozen.Registry(frozen.Basic))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := reg.Category("self-hosted-email")
	if !strings.Contains(out, "\nCategory: "+c.Name+"\nSlug: self-hosted-email\n") || !strings.Contains(out, "\nSources:\n") {
		t.Errorf("no get_sources answer in:\n%s", out)
	}
	for _, s := range c.Sources {
		if want := fmt.Sprintf("%d. %s\n   URL: %s\n   Type: %s\n   Why: %s", s.Rank, s.Name, s.URL, s.Type, s.Why); !strings.Contains(out, want) {
			t.Errorf("missing source %d:\n%s\nin:\n%s", s.Rank, want, out)
		}
	}
	if code, out, _ := run(t, nil, "query", "--registry", path, "--threshold", "0.99", "rust", "and", "go", "programming"); code != ExitFail || strings.Contains(out, "Sources:") {
		t.Errorf("no match: exit %d, and no sources to print:\n%s", code, out)
	}
}
