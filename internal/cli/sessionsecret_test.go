package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// secretFile writes a session secret file with content and mode.
func secretFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.secret")
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

// TestSessionSecretFlag: --session-secret-file refuses, with exit 2 and
// the fix, a file that is short, not hex, missing or readable by others,
// and is refused without --http; a good one reaches the HTTP options.
func TestSessionSecretFlag(t *testing.T) {
	good := strings.Repeat("0123456789abcdef", 4) + "\n" // 32 bytes, as od writes them plus a newline
	const fix = "head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' >"
	short := secretFile(t, strings.Repeat("ab", 31), 0o600)
	notHex := secretFile(t, strings.Repeat("zz", 32), 0o600)
	missing := filepath.Join(t.TempDir(), "none")
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"short", nil, []string{"serve", "--http", "127.0.0.1:0", "--session-secret-file", short},
			[]string{"--session-secret-file (THREEGS_SESSION_SECRET_FILE): " + short + " holds a session secret of 31 bytes (62 hex characters); at least 32 bytes (64 hex characters) are needed", fix}},
		{"short, from the environment", map[string]string{"THREEGS_SESSION_SECRET_FILE": short}, []string{"serve", "--http", "127.0.0.1:0"},
			[]string{"at least 32 bytes", fix}},
		{"not hex", nil, []string{"serve", "--http", "127.0.0.1:0", "--session-secret-file", notHex},
			[]string{"must hold hex characters only", fix}},
		{"missing", nil, []string{"serve", "--http", "127.0.0.1:0", "--session-secret-file", missing},
			[]string{"--session-secret-file (THREEGS_SESSION_SECRET_FILE)", "no such file", fix}},
		{"without --http", nil, []string{"serve", "--session-secret-file", secretFile(t, good, 0o600)},
			[]string{"--session-secret-file (THREEGS_SESSION_SECRET_FILE) applies to HTTP only; add --http ADDR"}},
	}
	if runtime.GOOS != "windows" {
		for _, mode := range []os.FileMode{0o640, 0o604} {
			exposed := secretFile(t, good, mode)
			cases = append(cases, struct {
				name string
				env  map[string]string
				args []string
				want []string
			}{"readable by others " + mode.String(), nil, []string{"serve", "--http", "127.0.0.1:0", "--session-secret-file", exposed},
				[]string{"so other users may read the session secret", "run: chmod 600 " + exposed}})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, c.env, c.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d:\n%s", code, ExitUsage, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}

	// A good file, upper case and with a trailing newline, is read.
	path := secretFile(t, strings.ToUpper(good), 0o600)
	env := &Env{Stderr: os.Stderr, Getenv: func(string) string { return "" }}
	f := newFlags(command{name: "serve", flags: serveFlags}, env)
	if err := f.fs.Parse([]string{"--http", "127.0.0.1:0", "--session-secret-file", path}); err != nil {
		t.Fatal(err)
	}
	c, err := parseServe(env, f)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.http.SessionSecret; len(got) != 32 || got[0] != 0x01 || got[31] != 0xef {
		t.Errorf("secret read as % x", got)
	}
}
