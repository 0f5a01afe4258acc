package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// TestGoInstall installs 3gs by its import path, as `go install
// github.com/three-good-sources/3gs/cmd/3gs@latest` does from the module
// proxy, into an empty GOBIN; the binary reports its version from build
// information and lists its commands.
func TestGoInstall(t *testing.T) {
	testkit.Long(t, "it installs the binary with go install into an empty GOBIN")
	gobin := t.TempDir()
	cmd := exec.Command("go", "install", "github.com/three-good-sources/3gs/cmd/3gs")
	cmd.Dir = testkit.Root()
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	bin := filepath.Join(gobin, "3gs")
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "3gs ") || !strings.Contains(string(out), runtime.Version()) {
		t.Errorf("3gs version: %q %v", out, err)
	}
	help, _ := exec.Command(bin, "help").CombinedOutput()
	for _, c := range []string{"serve", "doctor", "validate", "schema", "verify", "version"} {
		if !strings.Contains(string(help), "\n  "+c+" ") {
			t.Errorf("3gs help does not list %s:\n%s", c, help)
		}
	}
	if err := exec.Command(bin, "no-such-command").Run(); err == nil || err.(*exec.ExitError).ExitCode() != 2 {
		t.Errorf("an unknown command: %v, want exit 2", err)
	}
}
