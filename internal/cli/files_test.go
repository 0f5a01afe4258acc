package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/three-good-sources/3gs/internal/registry"
)

// Every file 3gs reads must be a regular file: /dev/zero (endless, size 0)
// is refused with its path instead of being read until memory runs out.
func TestDevicesAreRefused(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here:", err)
	}
	for _, args := range [][]string{
		{"validate", "/dev/zero"},
		{"verify", "/dev/zero"},
		{"serve", "--registry", "/dev/zero"},
		{"token", "list", "--tokens", "/dev/zero"},
		{"sign", "--key-file", "/dev/zero", "registry.json"},
	} {
		code, out, errOut := run(t, nil, args...)
		if code == ExitOK || !strings.Contains(out+errOut, "/dev/zero is a device, not a regular file") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// A named pipe with no writer used to block validate for good; now it is
// refused at once. A hang here fails the test by go test's timeout.
func TestNamedPipesAreRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "registry.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("cannot make a named pipe here:", err)
	}
	for _, args := range [][]string{
		{"validate", fifo},
		{"verify", fifo},
		{"serve", "--registry", fifo},
		{"token", "list", "--tokens", fifo},
	} {
		code, out, errOut := run(t, nil, args...)
		if code != ExitFail || !strings.Contains(out+errOut, fifo+" is a named pipe, not a regular file") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// A registry over the size limit is refused before it is read.
func TestOversizeRegistryIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(registry.MaxSize + 1) // sparse: no disk used
	f.Close()
	code, out, errOut := run(t, nil, "validate", path)
	if code != ExitFail || !strings.Contains(out+errOut, "more than the") || !strings.Contains(out+errOut, "limit for a registry") || !strings.Contains(out, "--max-registry-bytes") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// Listing a tokens file that does not exist is a mistyped path, not an
// empty list.
func TestTokenListMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typo.json")
	code, out, errOut := run(t, nil, "token", "list", "--tokens", path)
	if code != ExitFail || out != "" || !strings.Contains(errOut, path+" does not exist") || !strings.Contains(errOut, "3gs token new --tokens "+path) {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("token list created the file")
	}
}

// keygen makes the folders the key goes in, private to the user.
func TestKeygenCreatesFolders(t *testing.T) {
	home := t.TempDir()
	key := filepath.Join(home, ".config", "3gs", "curator.key")
	if code, _, errOut := run(t, nil, "keygen", "--out", key); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, dir := range []string{filepath.Join(home, ".config"), filepath.Dir(key)} {
		if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, mode %v; want 0700", dir, err, st.Mode().Perm())
		}
	}
	if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key: %v", err)
	}
}

// Ctrl-C ends a command other than serve at once, even one that never
// looks at its context; serve is left to shut down on its own.
func TestInterruptEndsCommands(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	ctx, cancel := context.WithCancel(context.Background())
	var errOut strings.Builder
	env := &Env{Stderr: &errOut, Getenv: func(string) string { return "" }}
	stuck := command{name: "validate", run: func(context.Context, *Env, *Flags) int { <-block; return ExitOK }}
	result := make(chan int, 1)
	go func() { result <- interruptible(ctx, env, stuck, nil) }()
	cancel()
	if code := <-result; code != ExitInterrupted || !strings.Contains(errOut.String(), "3gs validate: interrupted") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
	// serve gets the cancelled context and decides itself.
	served := command{name: "serve", run: func(ctx context.Context, _ *Env, _ *Flags) int { <-ctx.Done(); return ExitOK }}
	if code := interruptible(ctx, env, served, nil); code != ExitOK {
		t.Errorf("serve: exit %d", code)
	}
}
