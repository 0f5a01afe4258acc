package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// schemaCopy copies the repository's schema/ to a temporary folder.
func schemaCopy(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "schema")
	testkit.CopyTree(t, filepath.Join(testkit.Root(), "schema"), dst)
	return dst
}

func edit(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), old) {
		t.Fatalf("%s lacks %q", path, old)
	}
	os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644)
}

func TestSchemaDiff(t *testing.T) {
	root := filepath.Join(testkit.Root(), "schema")
	if code, out, errOut := run(t, nil, "schema", "diff", root, root); code != ExitOK || out != "" || !strings.Contains(errOut, "0 changes") {
		t.Errorf("no change: exit %d\n%s%s", code, out, errOut)
	}

	changed := schemaCopy(t)
	edit(t, filepath.Join(changed, "tools", "get_sources.json"), `"maxLength": 500`, `"maxLength": 400`)
	code, out, errOut := run(t, nil, "schema", "diff", root, changed)
	if code != ExitFail || out != "breaking   /tools/get_sources/input/query/maxLength: 500 → 400 (narrowed)\n" {
		t.Errorf("narrowed query: exit %d\n%s%s", code, out, errOut)
	}

	// CI's policy: a breaking change passes only with a new major version
	// and a changelog entry naming it. The versions come from the
	// repository's own contract.json, so the test follows its bumps.
	var contract struct{ ContractVersion string }
	if data, err := os.ReadFile(filepath.Join(root, "contract.json")); err != nil || json.Unmarshal(data, &contract) != nil {
		t.Fatalf("contract.json: %v", err)
	}
	cur := contract.ContractVersion
	major, _, _ := strings.Cut(cur, ".")
	n, _ := strconv.Atoi(major)
	next := strconv.Itoa(n+1) + ".0.0"
	changelog := filepath.Join(t.TempDir(), "CHANGELOG.md")
	code, _, errOut = run(t, nil, "schema", "diff", "--require-bump", "--changelog", changelog, root, changed)
	if code != ExitFail || !strings.Contains(errOut, "raise the major number of contractVersion") || !strings.Contains(errOut, cur+" → "+next) {
		t.Errorf("without a bump: exit %d %s", code, errOut)
	}
	edit(t, filepath.Join(changed, "contract.json"), `"`+cur+`"`, `"`+next+`"`)
	code, _, errOut = run(t, nil, "schema", "diff", "--require-bump", "--changelog", changelog, root, changed)
	if code != ExitFail || !strings.Contains(errOut, "needs an entry in") {
		t.Errorf("without a changelog: exit %d %s", code, errOut)
	}
	os.WriteFile(changelog, []byte("# Changelog\n\n## Contract "+next+"\n\nget_sources takes queries of 400 characters at most.\n"), 0o644)
	code, out, errOut = run(t, nil, "schema", "diff", "--require-bump", "--changelog", changelog, root, changed)
	if code != ExitOK || !strings.Contains(out, "contract version "+cur+" → "+next) {
		t.Errorf("with bump and entry: exit %d\n%s%s", code, out, errOut)
	}

	// --base reads schema/ from git: against HEAD, the working tree's
	// schemas (committed in CI's clean clone) show no breaking change.
	if code, out, errOut := run(t, nil, "schema", "diff", "--base", "HEAD", root); code != ExitOK {
		t.Errorf("--base HEAD: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, nil, "schema", "diff", "--base", "no-such-revision", root); code != ExitFail || !strings.Contains(errOut, "no-such-revision") {
		t.Errorf("a bad revision: exit %d %s", code, errOut)
	}
	if code, _, errOut := run(t, nil, "schema", "diff", root); code != ExitUsage || !strings.Contains(errOut, "give two folders") {
		t.Errorf("one folder: exit %d %s", code, errOut)
	}
}
