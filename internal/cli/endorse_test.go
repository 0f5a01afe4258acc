package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// peerKey is a new curator key's public half, as registries write it.
func peerKey(t *testing.T) string {
	t.Helper()
	k, err := curatorkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return curatorkey.URI(curatorkey.Public(k))
}

// endorsements reads the registry at path, failing the test unless it is
// valid.
func endorsements(t *testing.T, path string) (*registry.Registry, []gen.Endorsement) {
	t.Helper()
	reg, err := registry.LoadFile(path)
	if err != nil {
		t.Fatalf("%s no longer loads: %v", path, err)
	}
	return reg, reg.Endorsements()
}

func today() string { return time.Now().UTC().Format(time.DateOnly) }

func TestEndorseAddReplaceRemove(t *testing.T) {
	_, _, _, regPath := curatorSetup(t)
	one, two := peerKey(t), peerKey(t)

	// Flags after the path, as everywhere in 3gs.
	code, out, errOut := run(t, nil, "endorse", regPath, "--pubkey", one, "--url", "https://one.example", "--name", "Peer One", "--since", "2025-01-02")
	if code != ExitOK || !strings.HasPrefix(out, "Endorsed Peer One ("+one+") at https://one.example, since 2025-01-02.\n") {
		t.Fatalf("add: exit %d\n%s%s", code, out, errOut)
	}
	// The key without its pk: prefix, the registry from REGISTRY_PATH, the
	// URL from its environment twin; no --since is today.
	env := map[string]string{"REGISTRY_PATH": regPath, "THREEGS_ENDORSE_URL": "http://two.example:8080"}
	if code, out, errOut := run(t, env, "endorse", "--pubkey", strings.TrimPrefix(two, "pk:")); code != ExitOK || !strings.HasPrefix(out, "Endorsed "+two+" at http://two.example:8080") {
		t.Fatalf("add from the environment: exit %d\n%s%s", code, out, errOut)
	}
	_, es := endorsements(t, regPath)
	if len(es) != 2 || es[0].Pubkey != one || es[0].Name == nil || *es[0].Name != "Peer One" || es[0].Since != "2025-01-02" ||
		es[1].Pubkey != two || es[1].Name != nil || es[1].Since != today() || es[1].URL != "http://two.example:8080" {
		t.Fatalf("after adding two: %+v", es)
	}

	// Replacing keeps the position, and the name and day not given again.
	code, out, errOut = run(t, nil, "endorse", "--registry", regPath, "--pubkey", one, "--url", "https://one.example/registry.json")
	if code != ExitOK || !strings.HasPrefix(out, "Updated the endorsement of Peer One ("+one+"): at https://one.example/registry.json, since 2025-01-02.\n") {
		t.Fatalf("replace: exit %d\n%s%s", code, out, errOut)
	}
	_, es = endorsements(t, regPath)
	if len(es) != 2 || es[0].Pubkey != one || es[0].URL != "https://one.example/registry.json" || *es[0].Name != "Peer One" || es[0].Since != "2025-01-02" || es[1].Pubkey != two {
		t.Fatalf("after replacing: %+v", es)
	}
	// Saying it again changes nothing, not even the version.
	before, _ := os.ReadFile(regPath)
	if code, out, _ := run(t, nil, "endorse", regPath, "--pubkey", one, "--url", "https://one.example/registry.json", "--name", "Peer One"); code != ExitOK || !strings.Contains(out, "nothing changed") {
		t.Errorf("the same endorsement again: exit %d\n%s", code, out)
	}
	if after, _ := os.ReadFile(regPath); !bytes.Equal(before, after) {
		t.Error("an endorsement that changed nothing rewrote the file")
	}

	if code, out, errOut := run(t, nil, "endorse", regPath, "--remove", one); code != ExitOK || !strings.HasPrefix(out, "Removed the endorsement of Peer One ("+one+").\n") {
		t.Fatalf("remove: exit %d\n%s%s", code, out, errOut)
	}
	if _, es = endorsements(t, regPath); len(es) != 1 || es[0].Pubkey != two {
		t.Fatalf("after removing: %+v", es)
	}
	before, _ = os.ReadFile(regPath)
	expect(t, nil, []string{"endorse", regPath, "--remove", one}, ExitFail, []string{"does not endorse " + one, "nothing to remove", "it endorses " + two}, nil)
	if after, _ := os.ReadFile(regPath); !bytes.Equal(before, after) {
		t.Error("removing a missing endorsement changed the file")
	}
}

// Each refusal exits before the file is touched.
func TestEndorseRefusals(t *testing.T) {
	dir, _, pub, regPath := curatorSetup(t)
	other := peerKey(t)
	before, _ := os.ReadFile(regPath)
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--pubkey", pub, "--url", "https://me.example"}, ExitFail, []string{pub + " is the curator key of " + regPath + " itself", "does not endorse its own curator"}},
		{[]string{"--pubkey", "pk:notakey", "--url", "https://x.example"}, ExitUsage, []string{"--pubkey is 7 characters long"}},
		{[]string{"--remove", "pk:notakey"}, ExitUsage, []string{"--remove is 7 characters long"}},
		{[]string{"--pubkey", other, "--url", "ftp://x.example/registry.json"}, ExitUsage, []string{"--url", "must start with http:// or https://"}},
		{[]string{"--pubkey", other, "--url", "https://x.example/registry.json?v=2"}, ExitUsage, []string{"--url", "has a query"}},
		{[]string{"--pubkey", other, "--url", "https://x.example/#top"}, ExitUsage, []string{"has a fragment"}},
		{[]string{"--pubkey", other, "--url", "https://me@x.example"}, ExitUsage, []string{"has user information"}},
		{[]string{"--pubkey", other, "--url", "https://x.example:8443/mcp"}, ExitUsage, []string{"MCP endpoint", "name the node itself: https://x.example:8443"}},
		{[]string{"--pubkey", other}, ExitUsage, []string{"--url https://their.host"}},
		{[]string{"--pubkey", other, "--url", "https://x.example", "--since", "2025-13-01"}, ExitUsage, []string{"--since must be a day written YYYY-MM-DD"}},
		{[]string{"--remove", other, "--url", "https://x.example"}, ExitUsage, []string{"--remove takes the key alone"}},
		{[]string{"--pubkey", other, "--url", "https://x.example", "--name", "bad\u202ename"}, ExitFail, []string{"would not be a valid registry", "endorsements[0].name"}},
	} {
		expect(t, nil, append([]string{"endorse", regPath}, c.args...), c.code, c.want, nil)
	}
	expect(t, nil, []string{"endorse", "--pubkey", other, "--url", "https://x.example"}, ExitUsage, []string{"name the registry file to edit"}, nil)
	if after, _ := os.ReadFile(regPath); !bytes.Equal(before, after) {
		t.Error("a refused endorsement changed the file")
	}

	missing := dir + "/missing.json"
	expect(t, nil, []string{"endorse", missing, "--pubkey", other, "--url", "https://x.example"}, ExitFail, []string{missing + " does not exist"}, nil)
	if _, err := os.Stat(missing + safefile.Suffix); err == nil {
		t.Error("a missing registry got a lock file")
	}

	// A running server holds the lock; endorse must not write under it.
	lock, err := safefile.TryLock(regPath)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, nil, []string{"endorse", regPath, "--pubkey", other, "--url", "https://x.example"}, ExitFail, []string{"locked by process", "Stop that server"}, nil)
	lock.Unlock()
	if after, _ := os.ReadFile(regPath); !bytes.Equal(before, after) {
		t.Error("endorse wrote a locked registry")
	}
}

func TestEndorseSigning(t *testing.T) {
	_, keyPath, pub, regPath := curatorSetup(t)
	peer1, peer2 := peerKey(t), peerKey(t)
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatalf("sign: %s", errOut)
	}

	// Without a key: written, and the curator is told how to sign again.
	expect(t, nil, []string{"endorse", regPath, "--pubkey", peer1, "--url", "https://one.example"}, ExitOK,
		[]string{"Not signed: " + regPath + ".sig no longer matches it", "3gs sign --key-file KEY " + regPath}, nil)
	if code, out, _ := run(t, nil, "verify", "--pubkey", pub, regPath); code != ExitFail {
		t.Errorf("verify after an unsigned change: exit %d\n%s", code, out)
	}
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatalf("the advised sign: %s", errOut)
	}
	if code, out, errOut := run(t, nil, "verify", "--pubkey", pub, regPath); code != ExitOK {
		t.Fatalf("verify after the advised sign: exit %d\n%s%s", code, out, errOut)
	}

	// With the key: re-signed in the same step.
	code, out, errOut := run(t, nil, "endorse", regPath, "--pubkey", peer2, "--url", "https://two.example", "--key-file", keyPath)
	if code != ExitOK || !strings.Contains(out, "re-signed it with --key-file "+keyPath) || strings.Contains(errOut, "3gs sign") {
		t.Fatalf("endorse --key-file: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, nil, "verify", "--pubkey", pub, regPath); code != ExitOK {
		t.Fatalf("verify after endorse --key-file: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(regPath + ".sig.next"); err == nil {
		t.Error("a pending signature was left behind")
	}
	// The key may come from PKARR_SECRET_KEY, as for sign.
	seed, _ := os.ReadFile(keyPath)
	if code, out, errOut := run(t, map[string]string{secretKeyEnv: strings.TrimSpace(string(seed))}, "endorse", regPath, "--remove", peer1); code != ExitOK || !strings.Contains(out, "re-signed it with "+secretKeyEnv) {
		t.Fatalf("endorse with %s: exit %d\n%s%s", secretKeyEnv, code, out, errOut)
	}
	if code, out, errOut := run(t, nil, "verify", "--pubkey", pub, regPath); code != ExitOK {
		t.Fatalf("verify after endorse with %s: exit %d\n%s%s", secretKeyEnv, code, out, errOut)
	}

	// Another curator's key is refused before anything is written.
	_, otherKey, _, _ := curatorSetup(t)
	before, _ := os.ReadFile(regPath)
	expect(t, nil, []string{"endorse", regPath, "--pubkey", peer1, "--url", "https://one.example", "--key-file", otherKey}, ExitFail,
		[]string{"cannot sign " + regPath, "its curator.pubkey is " + pub}, nil)
	if after, _ := os.ReadFile(regPath); !bytes.Equal(before, after) {
		t.Error("endorse with another curator's key changed the file")
	}
}

func TestEndorseVersion(t *testing.T) {
	_, _, _, regPath := curatorSetup(t)
	reg, _ := endorsements(t, regPath)
	v0 := reg.Version()
	v1 := registry.BumpPatch(v0)
	if v1 == v0 {
		t.Fatalf("registry.BumpPatch(%q) did not change it", v0)
	}
	code, out, errOut := run(t, nil, "endorse", regPath, "--pubkey", peerKey(t), "--url", "https://one.example")
	if code != ExitOK || !strings.Contains(out, "version "+v0+" → "+v1) || !strings.Contains(errOut, "Not signed: it has no "+regPath+".sig") {
		t.Fatalf("endorse: exit %d\n%s%s", code, out, errOut)
	}
	if reg, _ = endorsements(t, regPath); reg.Version() != v1 || reg.Updated() != today() {
		t.Errorf("after endorse: version %s updated %s, want %s and %s", reg.Version(), reg.Updated(), v1, today())
	}

	expect(t, nil, []string{"endorse", regPath, "--pubkey", peerKey(t), "--url", "https://two.example", "--keep-version"}, ExitOK,
		[]string{"version " + v1 + " did not (--keep-version)"}, nil)
	if reg, _ = endorsements(t, regPath); reg.Version() != v1 || len(reg.Endorsements()) != 2 {
		t.Errorf("--keep-version: version %s, %d endorsements", reg.Version(), len(reg.Endorsements()))
	}
	if code, out, _ := run(t, map[string]string{"THREEGS_KEEP_VERSION": "true"}, "endorse", regPath, "--pubkey", peerKey(t), "--url", "https://three.example"); code != ExitOK || !strings.Contains(out, "version kept at "+v1) {
		t.Errorf("THREEGS_KEEP_VERSION: exit %d\n%s", code, out)
	}
}

// A registry changed since it was signed is not re-signed by endorse: that
// would bless the change (here, an endorsement someone slipped in by hand).
func TestEndorseRefusesToBlessATamperedFile(t *testing.T) {
	_, keyPath, _, regPath := curatorSetup(t)
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatalf("sign: %s", errOut)
	}
	// An endorsement added without signing: the file no longer matches.
	if code, _, errOut := run(t, nil, "endorse", regPath, "--pubkey", peerKey(t), "--url", "https://slipped.example"); code != ExitOK {
		t.Fatalf("unsigned endorse: %s", errOut)
	}
	before, _ := os.ReadFile(regPath)
	code, _, errOut := run(t, nil, "endorse", regPath, "--pubkey", peerKey(t), "--url", "https://two.example", "--key-file", keyPath)
	if code != ExitFail || !strings.Contains(errOut, "does not verify") || !strings.Contains(errOut, "3gs verify") {
		t.Fatalf("exit %d, stderr %q; want a refusal naming 3gs verify", code, errOut)
	}
	if after, _ := os.ReadFile(regPath); string(after) != string(before) {
		t.Error("the registry was changed")
	}
}
