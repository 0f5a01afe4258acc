package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// initNode runs 3gs init in a new folder under a temporary directory and
// returns the folder's files, the curator key it printed and its output.
func initNode(t *testing.T, name string) (keyPath, regPath, pub, out string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "node")
	args := []string{"init", dir}
	if name != "" {
		args = append(args, "--name", name) // after the argument
	}
	code, out, errOut := run(t, nil, args...)
	if code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	for _, l := range strings.Split(out, "\n") {
		if w := testkit.ShellWords(l); len(w) > 3 && w[0] == "3gs" && w[1] == "verify" && w[2] == "--pubkey" {
			pub = w[3]
		}
	}
	if _, err := curatorkey.ParsePublicKey(pub); err != nil {
		t.Fatalf("init printed no verify command with the key (%v):\n%s", err, out)
	}
	return filepath.Join(dir, "curator.key"), filepath.Join(dir, "registry.json"), pub, out
}

func TestInitCreatesSignedNode(t *testing.T) {
	keyPath, regPath, pub, out := initNode(t, "Ada's picks")
	st, err := os.Stat(keyPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, st.Mode())
	}
	kf, err := curatorkey.ReadKeyFile(keyPath)
	if err != nil || curatorkey.URI(curatorkey.Public(kf.Key)) != pub {
		t.Fatalf("the key file does not hold the printed key %s: %v", pub, err)
	}
	reg, err := registry.LoadFile(regPath)
	if err != nil {
		t.Fatal(err)
	}
	if reg.Version() != "0.1.0" || reg.Curator().Name != "Ada's picks" || reg.Curator().Pubkey != pub || len(reg.Endorsements()) != 0 || len(reg.Categories()) != 1 {
		t.Errorf("starter registry: version %s, curator %+v, %d endorsements, %d categories", reg.Version(), reg.Curator(), len(reg.Endorsements()), len(reg.Categories()))
	}
	if c := reg.Categories()[0]; len(c.Sources) != 3 || len(c.QueryPatterns) < 3 {
		t.Errorf("example category %s: %d sources, %d patterns", c.Slug, len(c.Sources), len(c.QueryPatterns))
	}
	if code, vout, _ := run(t, nil, "validate", regPath); code != ExitOK || !strings.HasPrefix(vout, "OK: ") || strings.Contains(vout, "warning") {
		t.Errorf("validate: exit %d\n%s", code, vout)
	}
	if code, vout, errOut := run(t, nil, "verify", "--pubkey", pub, regPath); code != ExitOK || !strings.HasPrefix(vout, "OK: signed by "+strings.TrimPrefix(pub, "pk:")) {
		t.Errorf("verify: exit %d\n%s%s", code, vout, errOut)
	}
	if _, err := os.Stat(regPath + ".sig.next"); err == nil {
		t.Error("a pending signature was left behind")
	}

	// Every command it prints is a real command with real flags.
	want := map[string]bool{"validate": false, "sign": false, "serve": false, "verify": false, "endorse": false}
	for _, l := range strings.Split(out, "\n") {
		w := testkit.ShellWords(l)
		if len(w) < 2 || w[0] != "3gs" {
			continue
		}
		checkArgs(t, "init output", w[1:])
		want[w[1]] = true
	}
	for cmd, seen := range want {
		if !seen {
			t.Errorf("init does not print how to %s:\n%s", cmd, out)
		}
	}
	for _, s := range []string{
		"3gs serve --registry " + regPath + " --key-file " + keyPath + " --http 127.0.0.1:8080 --proposals on",
		"3gs verify --pubkey " + pub + " " + regPath,
		"3gs endorse --registry THEIR/registry.json --key-file THEIR/curator.key --pubkey " + pub + " --url https://YOUR-HOST:PORT --name 'Ada'\\''s picks'",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("init output lacks %q:\n%s", s, out)
		}
	}

	// Without --name the curator gets the default name; THREEGS_CURATOR_NAME sets it.
	_, regPath, _, _ = initNode(t, "")
	if reg, err := registry.LoadFile(regPath); err != nil || reg.Curator().Name != "My curator" {
		t.Errorf("default name: %v %+v", err, reg)
	}
	dir := filepath.Join(t.TempDir(), "env")
	if code, _, errOut := run(t, map[string]string{"THREEGS_CURATOR_NAME": "From Env"}, "init", dir); code != ExitOK {
		t.Fatalf("init with THREEGS_CURATOR_NAME: exit %d\n%s", code, errOut)
	}
	if reg, err := registry.LoadFile(filepath.Join(dir, "registry.json")); err != nil || reg.Curator().Name != "From Env" {
		t.Errorf("THREEGS_CURATOR_NAME: %v %+v", err, reg)
	}
}

func TestInitRefuses(t *testing.T) {
	base := t.TempDir()
	full := filepath.Join(base, "full")
	os.Mkdir(full, 0o755)
	notes := filepath.Join(full, "notes.txt")
	os.WriteFile(notes, []byte("mine"), 0o644)
	expect(t, nil, []string{"init", full}, ExitFail, []string{full + " already exists and is not empty", "Choose a new folder"}, nil)
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("init wrote into a non-empty folder: %v", entries)
	}
	expect(t, nil, []string{"init", notes}, ExitFail, []string{notes + " exists and is not a folder"}, nil)
	expect(t, nil, []string{"init"}, ExitUsage, []string{"name the one folder to create"}, nil)
	expect(t, nil, []string{"init", "a", "b"}, ExitUsage, []string{"got 2 arguments"}, nil)
	expect(t, nil, []string{"init", filepath.Join(base, "x"), "--name", " "}, ExitUsage, []string{"--name (THREEGS_CURATOR_NAME) is empty"}, nil)
	if _, err := os.Stat(filepath.Join(base, "x")); err == nil {
		t.Error("a refused init created its folder")
	}

	// An empty folder that exists is fine.
	empty := filepath.Join(base, "empty")
	os.Mkdir(empty, 0o755)
	if code, _, errOut := run(t, nil, "init", empty); code != ExitOK {
		t.Errorf("init into an empty folder: exit %d\n%s", code, errOut)
	}
}

// Two nodes made by init: the second endorses the first with the very
// command the first's init printed, and a follower of the second accepts
// the first's files under the key it endorses.
func TestInitThenEndorse(t *testing.T) {
	// A name with a space, so the printed command's quoting is exercised
	// (words, the README test's splitter, does not read '\'' escapes).
	aKey, aReg, aPub, aOut := initNode(t, "Ada Lovelace")
	bKey, bReg, bPub, _ := initNode(t, "Bob")

	var cmd []string
	for _, l := range strings.Split(aOut, "\n") {
		if w := testkit.ShellWords(l); len(w) > 1 && w[0] == "3gs" && w[1] == "endorse" {
			cmd = w[1:]
		}
	}
	for i, w := range cmd {
		switch w {
		case "THEIR/registry.json":
			cmd[i] = bReg
		case "THEIR/curator.key":
			cmd[i] = bKey
		case "https://YOUR-HOST:PORT":
			cmd[i] = "https://ada.example:8443"
		}
	}
	// The command as printed, with B's paths: it names B's key, so B's
	// registry is signed again (without it, it would be left unsigned).
	code, out, errOut := run(t, nil, cmd...)
	if code != ExitOK || !strings.Contains(out, "Endorsed Ada Lovelace ("+aPub+") at https://ada.example:8443") || !strings.Contains(out, "re-signed") || !strings.Contains(out, "version 0.1.0 → 0.1.1") {
		t.Fatalf("%v: exit %d\n%s%s", cmd, code, out, errOut)
	}
	if code, vout, errOut := run(t, nil, "verify", "--pubkey", bPub, bReg); code != ExitOK {
		t.Fatalf("verify B after endorsing: exit %d\n%s%s", code, vout, errOut)
	}
	// init started B's audit log; the endorsement is its second entry,
	// and the signature covers it.
	if code, vout, errOut := run(t, nil, "audit", "verify", "--pubkey", bPub, bReg); code != ExitOK || !strings.HasPrefix(vout, "OK: 2 entries, head seq 2") || !strings.Contains(vout, "matches the head") {
		t.Fatalf("audit verify B after endorsing: exit %d\n%s%s", code, vout, errOut)
	}
	if code, lout, _ := run(t, nil, "audit", "log", "--action", "endorse", bReg); code != ExitOK || !strings.HasPrefix(lout, "2 ") || strings.Count(lout, "\n") != 1 {
		t.Errorf("audit log --action endorse: %d %q", code, lout)
	}
	reg, err := registry.LoadFile(bReg)
	if err != nil {
		t.Fatal(err)
	}
	es := reg.Endorsements()
	if len(es) != 1 || es[0].Pubkey != aPub || es[0].URL != "https://ada.example:8443" || es[0].Name == nil || *es[0].Name != "Ada Lovelace" {
		t.Fatalf("B's endorsements: %+v", es)
	}
	endorsed, err := curatorkey.ParsePublicKey(es[0].Pubkey)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(aReg)
	sig, _ := os.ReadFile(aReg + ".sig")
	if _, err := peer.Accept(endorsed, data, sig, nil); err != nil {
		t.Errorf("A's registry is not accepted under the key B endorses: %v", err)
	}
	// And A cannot be endorsed into its own registry.
	expect(t, nil, []string{"endorse", aReg, "--pubkey", aPub, "--url", "https://ada.example", "--key-file", aKey}, ExitFail, []string{"does not endorse its own curator"}, nil)
}

// A name the registry cannot hold is the user's mistake, named as such:
// exit 2, the flag and its rule, and nothing written.
func TestInitRefusesBadName(t *testing.T) {
	for _, name := range []string{strings.Repeat("a", 201), "tab\there"} {
		dir := filepath.Join(t.TempDir(), "node")
		code, _, errOut := run(t, nil, "init", dir, "--name", name)
		if code != ExitUsage || !strings.Contains(errOut, "--name (THREEGS_CURATOR_NAME)") || strings.Contains(errOut, "bug") {
			t.Errorf("name %q: exit %d, stderr %q", name, code, errOut)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("name %q: %s was created", name, dir)
		}
	}
}
