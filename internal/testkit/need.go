package testkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// inCI says whether the tests run in CI, where a missing tool fails a
// test instead of skipping it: a skip there would hide that what the test
// covers was never exercised.
func inCI() bool { return os.Getenv("CI") != "" }

// NeedDebianPackage returns the path of the program name, which Debian's
// package of the same name installs (haproxy, nginx). When it is missing
// the test installs the package if it may (as root, in CI or with
// THREEGS_E2E_INSTALL=1); elsewhere it skips, saying how to enable it. In
// CI a failed install fails the test.
func NeedDebianPackage(t testing.TB, name string) string {
	t.Helper()
	find := func() string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		// /usr/sbin is often not on an unprivileged user's PATH.
		if p := filepath.Join("/usr/sbin", name); fileExists(p) {
			return p
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	if os.Geteuid() != 0 || (!inCI() && os.Getenv("THREEGS_E2E_INSTALL") != "1") {
		t.Skipf("%s is not installed: install it (apt-get install %s), or run this test as root with THREEGS_E2E_INSTALL=1 to let it install Debian's package itself (CI does)", name, name)
	}
	err := aptInstall(name)
	p := find()
	if err == nil && p == "" {
		err = fmt.Errorf("apt-get installed %s, but no %s binary is on PATH or in /usr/sbin", name, name)
	}
	if err != nil {
		if inCI() {
			t.Fatalf("%s could not be installed: %v", name, err)
		}
		t.Skipf("%s could not be installed, so what this test checks with it is not tested: %v", name, err)
	}
	t.Logf("installed Debian's %s package: %s", name, p)
	return p
}

// aptInstall installs Debian's package pkg, refreshing the package lists
// once if the first try fails: a new machine may have none yet, or stale
// ones.
func aptInstall(pkg string) error {
	apt := func(args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	install := []string{"install", "-y", "--no-install-recommends", pkg}
	err := apt(install...)
	if err != nil {
		if err = apt("update"); err == nil {
			err = apt(install...)
		}
	}
	return err
}

// NeedNodePackage returns the node binary, skipping (failing in CI) when
// the npm package pkg is not installed under dir/node_modules; install
// is the command that installs it, for the message.
func NeedNodePackage(t testing.TB, dir, pkg, install string) string {
	t.Helper()
	if !fileExists(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))) {
		msg := pkg + " is not installed; run: " + install
		if inCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH")
	}
	return node
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
