package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// No build output is tracked: compiled binaries (ELF, Mach-O, PE) and Go
// test binaries bloat every clone and cannot be reviewed.
func TestNoBuildOutputsTracked(t *testing.T) {
	root := testkit.Root()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: cannot list the tracked files")
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): nothing to check", err)
	}
	magics := [][]byte{{0x7f, 'E', 'L', 'F'}, {0xcf, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xcf}, {'M', 'Z'}}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if strings.HasSuffix(name, ".test") || strings.HasSuffix(name, ".exe") {
			t.Errorf("%s is a build output and is tracked: git rm --cached it", name)
			continue
		}
		f, err := os.Open(filepath.Join(root, name))
		if err != nil {
			continue // deleted in the work tree
		}
		head := make([]byte, 4)
		n, _ := f.Read(head)
		f.Close()
		for _, m := range magics {
			if n >= len(m) && bytes.Equal(head[:len(m)], m) && !strings.Contains(name, "testdata/fuzz/") {
				t.Errorf("%s is a compiled binary and is tracked: git rm --cached it", name)
			}
		}
	}
}

// The licence is stated once in LICENSE and repeated, identically, where
// people and registries look for it: server.json and the README.
func TestLicenseStated(t *testing.T) {
	root := testkit.Root()
	text, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatalf("no LICENSE file: %v", err)
	}
	if !strings.Contains(string(text), "Apache License") || !strings.Contains(string(text), "Version 2.0") {
		t.Fatal("LICENSE is not the Apache License 2.0 the README names")
	}
	data, err := os.ReadFile(filepath.Join(root, "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sj struct {
		Meta map[string]struct {
			License string `json:"license"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(data, &sj); err != nil {
		t.Fatal(err)
	}
	if got := sj.Meta["io.modelcontextprotocol.registry/publisher-provided"].License; got != "Apache-2.0" {
		t.Errorf("server.json states the licence as %q, want Apache-2.0", got)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "## License") || !strings.Contains(string(readme), "Apache License 2.0") {
		t.Error("README has no License section naming the Apache License 2.0")
	}
}

// docs/development.md is where a newcomer learns the layout: its table
// names every package under internal/, and where it counts the tools
// ("all ten tools") the count is schema/tools'. (It says "every tool"
// instead, so that adding a tool stays one schema and one handler.)
func TestDevelopmentDocsKeepUp(t *testing.T) {
	root := testkit.Root()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(filepath.Join(root, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if d.IsDir() && !strings.Contains(string(doc), "| `internal/"+d.Name()+"` |") {
			t.Errorf("docs/development.md's layout table has no row for internal/%s: add one saying what it holds", d.Name())
		}
	}
	tools, err := filepath.Glob(filepath.Join(root, "schema", "tools", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	numbers := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"}
	for i, n := range numbers {
		if strings.Contains(string(doc), "all "+n+" tools") && i != len(tools) {
			t.Errorf("docs/development.md says \"all %s tools\"; schema/tools has %d", n, len(tools))
		}
	}
}
