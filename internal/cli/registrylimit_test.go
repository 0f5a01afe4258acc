package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	threegs "github.com/three-good-sources/3gs"
)

// Every command that reads a registry file takes the same size limit,
// with the same environment twin, so raising it for serve can be done the
// same way for the commands that check what serve will load.
func TestRegistryLimitOnEveryReader(t *testing.T) {
	env := &Env{Getenv: func(string) string { return "" }}
	for _, words := range [][]string{
		{"serve"}, {"doctor"}, {"validate"}, {"sign"}, {"verify"}, {"endorse"}, {"query"}, {"misses"},
		{"audit", "verify"}, {"audit", "log"}, {"audit", "migrate"},
	} {
		c, ok := find(words)
		if !ok {
			t.Fatalf("no command %v", words)
		}
		f := newFlags(c, env)
		if f.fs.Lookup("max-registry-bytes") == nil || f.twins["max-registry-bytes"] != "THREEGS_MAX_REGISTRY_BYTES" {
			t.Errorf("3gs %s has no --max-registry-bytes (THREEGS_MAX_REGISTRY_BYTES)", strings.Join(words, " "))
		}
	}
}

// A registry one byte over the limit is refused by each reader, naming the
// flag that lets it in; at the limit it is read. The flag and its twin
// both set it.
func TestRegistryLimitApplies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.json")
	if err := os.WriteFile(path, threegs.DefaultRegistry, 0o644); err != nil {
		t.Fatal(err)
	}
	size := len(threegs.DefaultRegistry)
	under, at := strconv.Itoa(size-1), strconv.Itoa(size)
	for _, tc := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"validate", path, "--max-registry-bytes", under}, nil},
		{[]string{"validate", path}, map[string]string{"THREEGS_MAX_REGISTRY_BYTES": under}},
		{[]string{"query", "--registry", path, "--max-registry-bytes", under, "learn", "rust"}, nil},
		{[]string{"serve", "--registry", path, "--allow-unsigned", "--max-registry-bytes", under}, nil},
	} {
		code, out, errOut := run(t, tc.env, tc.args...)
		if code != ExitFail || !strings.Contains(out+errOut, "more than the "+under+"-byte limit") || !strings.Contains(out+errOut, "--max-registry-bytes") {
			t.Errorf("%v %v: exit %d\n%s%s", tc.args, tc.env, code, out, errOut)
		}
	}
	if code, out, errOut := run(t, nil, "validate", path, "--max-registry-bytes", at); code != ExitOK {
		t.Errorf("validate at the limit: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, nil, "query", "--registry", path, "--max-registry-bytes", at, "learn", "rust"); code != ExitOK {
		t.Errorf("query at the limit: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, nil, "validate", path, "--max-registry-bytes", "12"); code != ExitUsage || !strings.Contains(errOut, "--max-registry-bytes (THREEGS_MAX_REGISTRY_BYTES) must be a whole number of at least 1024") {
		t.Errorf("a limit no registry fits: exit %d\n%s", code, errOut)
	}
}

// Peers are held to 32 MiB by default, or --max-registry-bytes when that
// is lower, and --peer-max-bytes may not exceed --max-registry-bytes.
func TestPeerLimitFollowsRegistryLimit(t *testing.T) {
	parse := func(args ...string) (*serveConfig, error) {
		f := newFlags(command{name: "serve", flags: serveFlags}, &Env{Getenv: func(string) string { return "" }})
		if err := f.fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return parseServe(&Env{Stderr: os.Stderr, Getenv: func(string) string { return "" }}, f)
	}
	c, err := parse("--max-registry-bytes", "500000000")
	if err != nil || c.peers.Fetcher.MaxBytes != 32<<20 {
		t.Errorf("peer limit with no --peer-max-bytes: %v %v", c, err)
	}
	c, err = parse("--max-registry-bytes", "2000000")
	if err != nil || c.peers.Fetcher.MaxBytes != 2000000 {
		t.Errorf("peer limit with no --peer-max-bytes under a lower --max-registry-bytes: %v %v", c, err)
	}
	c, err = parse("--max-registry-bytes", "500000000", "--peer-max-bytes", "100000000")
	if err != nil || c.peers.Fetcher.MaxBytes != 100000000 {
		t.Errorf("a higher --peer-max-bytes: %v %v", c, err)
	}
	c, err = parse("--max-registry-bytes", "500000000", "--peer-max-bytes", "2000000")
	if err != nil || c.peers.Fetcher.MaxBytes != 2000000 {
		t.Errorf("a lower --peer-max-bytes: %v %v", c, err)
	}
	if _, err := parse("--max-registry-bytes", "2000000", "--peer-max-bytes", "3000000"); err == nil || !strings.Contains(err.Error(), "--peer-max-bytes (THREEGS_PEER_MAX_BYTES) must be at most 2000000, the --max-registry-bytes") {
		t.Errorf("a --peer-max-bytes above --max-registry-bytes: %v", err)
	}
}
