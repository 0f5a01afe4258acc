package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// run executes a 3gs command line in-process.
func run(t *testing.T, environ map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return environ[k] }, Environ: environOf(environ)}
	code = Run(context.Background(), args, env)
	return code, out.String(), errOut.String()
}

// environOf is Env.Environ for the variables in environ.
func environOf(environ map[string]string) func() []string {
	return func() []string {
		var kv []string
		for k, v := range environ {
			kv = append(kv, k+"="+v)
		}
		return kv
	}
}

func TestValidateEmbeddedAndFiles(t *testing.T) {
	code, out, _ := run(t, nil, "validate")
	if code != ExitOK || !strings.HasPrefix(out, "OK: embedded registry.json: version ") {
		t.Errorf("embedded: %d %q", code, out)
	}
	path := frozenRegistry(t)
	code, out, _ = run(t, nil, "validate", path)
	if code != ExitOK || !strings.HasPrefix(out, "OK: "+path) {
		t.Errorf("file: %d %q", code, out)
	}
	code, out, _ = run(t, map[string]string{"REGISTRY_PATH": path}, "validate")
	if code != ExitOK || !strings.HasPrefix(out, "OK: "+path) {
		t.Errorf("REGISTRY_PATH: %d %q", code, out)
	}
}

func TestValidateSharedFixture(t *testing.T) {
	path := testkit.SharedRegistry(t)
	code, out, _ := run(t, nil, "validate", path)
	if code != ExitOK || out != "OK: "+path+": version 0.1.0, 10 categories\n" {
		t.Errorf("%d %q", code, out)
	}
}

// broken writes a copy of the frozen registry Basic changed by edit and
// returns its path.
func broken(t *testing.T, edit func(cat map[string]any)) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(frozen.Registry(frozen.Basic), &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc["categories"].(map[string]any)["rust-learning"].(map[string]any))
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "registry.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func source(cat map[string]any, i int) map[string]any {
	return cat["sources"].([]any)[i].(map[string]any)
}

func TestValidateBrokenRegistries(t *testing.T) {
	const p = "categories.rust-learning."
	cases := []struct {
		name string
		edit func(cat map[string]any)
		want []string
	}{
		{"two sources", func(c map[string]any) { c["sources"] = c["sources"].([]any)[:2] },
			[]string{p + "sources: must have exactly 3 items, got 2"}},
		{"ranks 1,1,3", func(c map[string]any) { source(c, 1)["rank"] = 1 },
			[]string{p + "sources[1].rank: rank 1 is already used by sources[0]; the three sources must be ranked 1, 2 and 3"}},
		{"unknown field", func(c map[string]any) { c["labels"] = []string{"rust"} },
			[]string{p + "labels: unknown field; allowed: name, description, query_patterns, tags, sources"}},
		{"upper-case tag", func(c map[string]any) { c["tags"] = []string{"systems", "Rust"} },
			[]string{p + "tags[1]: must match the pattern ^[a-z0-9]+(-[a-z0-9]+)*$, got \"Rust\""}},
		{"missing why", func(c map[string]any) { delete(source(c, 2), "why") },
			[]string{p + "sources[2].why: required field is missing"}},
		{"rank 2.5", func(c map[string]any) { source(c, 1)["rank"] = 2.5 },
			[]string{p + "sources[1].rank: must be an integer, got 2.5"}},
		{"Name beside name", func(c map[string]any) { c["Name"] = "Rust" },
			[]string{p + `Name: unknown field; field names are case-sensitive, did you mean "name"?`}},
		{"non-URL url", func(c map[string]any) { source(c, 0)["url"] = "the rust book" },
			[]string{p + `sources[0].url: must be an absolute URL, got "the rust book"`,
				p + `sources[0].url: must match the pattern ^https?://, got "the rust book"`}},
		{"unknown type", func(c map[string]any) { source(c, 0)["type"] = "ebook" },
			[]string{p + `sources[0].type: must be one of documentation, tutorial, video, article, tool, repo, forum, book, course, api; got "ebook"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := broken(t, c.edit)
			code, out, _ := run(t, nil, "validate", path)
			if code != ExitFail {
				t.Errorf("exit code %d, want %d", code, ExitFail)
			}
			var want []string
			for _, w := range c.want {
				want = append(want, path+": "+w)
			}
			want = append(want, "FAIL: "+path+": "+strconv.Itoa(len(c.want))+" "+plural(len(c.want), "problem", "problems"))
			if got := strings.TrimSuffix(out, "\n"); got != strings.Join(want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
			}
		})
	}
	t.Run("invalid slug", func(t *testing.T) {
		var doc map[string]any
		_ = json.Unmarshal(frozen.Registry(frozen.Basic), &doc)
		cats := doc["categories"].(map[string]any)
		cats["Rust_Learning"] = cats["rust-learning"]
		data, _ := json.Marshal(doc)
		path := filepath.Join(t.TempDir(), "r.json")
		_ = os.WriteFile(path, data, 0o644)
		code, out, _ := run(t, nil, "validate", path)
		want := path + ": categories.Rust_Learning: key must match the pattern ^[a-z0-9]+(-[a-z0-9]+)*$\nFAIL: " + path + ": 1 problem\n"
		if code != ExitFail || out != want {
			t.Errorf("%d\n%s", code, out)
		}
	})
	t.Run("one good one bad", func(t *testing.T) {
		bad := broken(t, func(c map[string]any) { delete(c, "name") })
		good := frozenRegistry(t)
		code, out, _ := run(t, nil, "validate", good, bad)
		if code != ExitFail || !strings.HasPrefix(out, "OK: "+good) || !strings.Contains(out, bad+": "+p+"name: required field is missing") {
			t.Errorf("%d\n%s", code, out)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		code, out, _ := run(t, nil, "validate", "/nonexistent/registry.json")
		if code != ExitFail || !strings.Contains(out, "FAIL: /nonexistent/registry.json: open /nonexistent/registry.json: no such file or directory") {
			t.Errorf("%d %q", code, out)
		}
	})
}

func TestUsageErrors(t *testing.T) {
	if code, _, errOut := run(t, nil, "frobnicate"); code != ExitUsage || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %d %q", code, errOut)
	}
	if code, _, errOut := run(t, nil, "validate", "--bogus"); code != ExitUsage || !strings.Contains(errOut, "unknown flag: --bogus") {
		t.Errorf("unknown flag: %d %q", code, errOut)
	}
	if code, out, _ := run(t, nil, "help", "validate"); code != ExitOK || !strings.Contains(out, "--registry (env REGISTRY_PATH; default none)") {
		t.Errorf("help validate: %d %q", code, out)
	}
	if code, out, _ := run(t, nil, "version"); code != ExitOK || !strings.HasPrefix(out, "3gs ") {
		t.Errorf("version: %d %q", code, out)
	}
}

// A host worth a second look is a warning: the registry still validates.
func TestValidateWarnsAboutHosts(t *testing.T) {
	_, _, _, regPath := curatorSetup(t)
	data, _ := os.ReadFile(regPath)
	i := bytes.Index(data, []byte(`"url": "https://`))
	if i < 0 {
		t.Fatal("no source URL in the registry")
	}
	at := i + len(`"url": "https://`)
	data = append(data[:at:at], append([]byte("10.0.0.7/"), data[bytes.IndexByte(data[at:], '"')+at:]...)...)
	os.WriteFile(regPath, data, 0o644)
	code, out, _ := run(t, nil, "validate", regPath)
	if code != ExitOK || !strings.Contains(out, "warning: "+regPath+": categories.") || !strings.Contains(out, "is private") || !strings.Contains(out, "OK: "+regPath) {
		t.Errorf("%d %s", code, out)
	}
}

// A registry that is not JSON is told by line and column, with the text
// there, in validate and in serve, whose fix no longer sends the curator
// to validate for the same words.
func TestSyntaxErrorsHaveALineAndColumn(t *testing.T) {
	_, regPath, _, _ := initNode(t, "Tester")
	data, _ := os.ReadFile(regPath)
	broken := strings.Replace(string(data), `"rank": 1,`, `"rank": 1,,`, 1)
	os.WriteFile(regPath, []byte(broken), 0o644)
	line := 1 + strings.Count(broken[:strings.Index(broken, ",,")], "\n")
	want := fmt.Sprintf("syntax error at line %d, column ", line)
	if code, out, errOut := run(t, nil, "validate", regPath); code != ExitFail || !strings.Contains(out+errOut, want) || !strings.Contains(out+errOut, `near "\"rank\": 1,,"`) {
		t.Errorf("validate: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := serveLines(t, nil, []string{"--registry", regPath}); code == ExitOK || !strings.Contains(errOut, want) || !strings.Contains(errOut, "Fix: correct the JSON there") {
		t.Errorf("serve: exit %d\n%s", code, errOut)
	}
}

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
	path := frozenRegistry(t)
	size := len(frozen.Registry(frozen.Basic))
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
