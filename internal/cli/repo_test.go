package cli

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// docs/development.md is where a newcomer learns the layout: its Layout
// table has a row for every package `go list ./...` lists (a row names
// its packages in its first cell, the root package by its file), every
// path a row names still exists, and a directory it names under cmd/ or
// internal/ is still a package. internal/tools' row names each of its
// files that is not a tool's (handlers.go, editor.go, ...). Where the
// document counts the tools ("all ten tools") the count is schema/tools'.
// (It says "every tool" instead, so that adding a tool stays one schema
// and one handler.)
func TestDevelopmentDocsKeepUp(t *testing.T) {
	root := testkit.Root()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := layoutRows(t, string(doc))
	named := map[string]bool{}
	for _, r := range rows {
		for _, p := range r.paths {
			named[strings.TrimSuffix(p, "/")] = true
		}
	}
	pkgs := modulePackages(t, root)
	for _, p := range pkgs {
		if named[p] {
			continue
		}
		if p == "." && slices.ContainsFunc(slices.Collect(maps.Keys(named)), func(n string) bool { return !strings.Contains(n, "/") && strings.HasSuffix(n, ".go") }) {
			continue
		}
		t.Errorf("docs/development.md's layout table has no row for the package %s: add one saying what it holds", p)
	}
	for _, r := range rows {
		for _, p := range r.paths {
			p = strings.TrimSuffix(p, "/")
			st, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
			switch {
			case err != nil:
				t.Errorf("docs/development.md's layout table names %s, which no longer exists: remove or rename its row", p)
			case st.IsDir() && (strings.HasPrefix(p, "internal/") || strings.HasPrefix(p, "cmd/")) && !slices.Contains(pkgs, p):
				t.Errorf("docs/development.md's layout table names %s, which is no longer a package: remove or rename its row", p)
			}
		}
	}
	toolRow := ""
	for _, r := range rows {
		if slices.Contains(r.paths, "internal/tools") {
			toolRow = r.text
		}
	}
	files, err := filepath.Glob(filepath.Join(root, "internal", "tools", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, "schema", "tools", strings.TrimSuffix(name, ".go")+".json")); err == nil {
			continue // a tool's own file
		}
		if !strings.Contains(toolRow, "`"+name+"`") {
			t.Errorf("docs/development.md's row for internal/tools does not name %s, a file the tools share: say what it holds", name)
		}
	}
	for _, m := range regexp.MustCompile("`([a-z_]+\\.go)`").FindAllStringSubmatch(toolRow, -1) {
		if _, err := os.Stat(filepath.Join(root, "internal", "tools", m[1])); err != nil {
			t.Errorf("docs/development.md's row for internal/tools names %s, which internal/tools no longer has: remove it from the row", m[1])
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

// layoutRow is one row of docs/development.md's Layout table: the paths
// its first cell names (in backquotes) and the whole row.
type layoutRow struct {
	paths []string
	text  string
}

// layoutRows reads the Layout table of docs/development.md.
func layoutRows(t *testing.T, doc string) []layoutRow {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## Layout\n")
	if !ok {
		t.Fatal("docs/development.md has no \"## Layout\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []layoutRow
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 2 {
			continue // prose, the header or the separator
		}
		var paths []string
		for i, part := range strings.Split(strings.TrimPrefix(cells[0], "| "), "`") {
			if i%2 == 1 {
				paths = append(paths, part)
			}
		}
		rows = append(rows, layoutRow{paths: paths, text: line})
	}
	if len(rows) == 0 {
		t.Fatal("docs/development.md's Layout section has no table rows")
	}
	return rows
}

// modulePackages lists the module's packages with `go list ./...`, as
// directories relative to root ("." for the root package).
func modulePackages(t *testing.T, root string) []string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot list the packages the layout table must name")
	}
	cmd := exec.Command(goCmd, "list", "-f", "{{.Dir}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []string
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, filepath.ToSlash(rel))
	}
	return pkgs
}
