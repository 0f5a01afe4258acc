package schemadiff

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/schema"
	"github.com/three-good-sources/3gs/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/cases/*.txtar")

// TestGolden: each testdata/cases/NAME.txtar is a pair of schema folders,
// testdata/base with the file sections named old/... and new/... laid over
// it (and "delete new/..." sections removing files), and the changes
// Compare must report, one per line. A case whose comment calls it breaking
// must report a breaking change, and no other case may.
func TestGolden(t *testing.T) {
	cases, _ := filepath.Glob("testdata/cases/*.txtar")
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, file := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			comment, sections := parseCase(string(data))
			dir := t.TempDir()
			for _, side := range []string{"old", "new"} {
				testkit.CopyTree(t, "testdata/base", filepath.Join(dir, side))
			}
			for _, s := range sections {
				switch {
				case s.name == "want":
				case strings.HasPrefix(s.name, "delete "):
					if err := os.Remove(filepath.Join(dir, strings.TrimPrefix(s.name, "delete "))); err != nil {
						t.Fatal(err)
					}
				default:
					if err := os.WriteFile(filepath.Join(dir, s.name), []byte(s.body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			old, err := schema.Load(filepath.Join(dir, "old"))
			if err != nil {
				t.Fatal(err)
			}
			new, err := schema.Load(filepath.Join(dir, "new"))
			if err != nil {
				t.Fatal(err)
			}
			changes := Compare(old, new)
			var got strings.Builder
			for _, c := range changes {
				got.WriteString(c.String() + "\n")
			}
			if *update {
				i := strings.Index(string(data), "-- want --\n")
				os.WriteFile(file, []byte(string(data[:i])+"-- want --\n"+got.String()), 0o644)
				return
			}
			want := ""
			for _, s := range sections {
				if s.name == "want" {
					want = s.body
				}
			}
			if got.String() != want {
				t.Errorf("got:\n%swant:\n%s(run with -update to accept)", got.String(), want)
			}
			if says := strings.Contains(comment, "breaking"); says != AnyBreaking(changes) {
				t.Errorf("the case says breaking: %v; the changes are breaking: %v", says, AnyBreaking(changes))
			}
		})
	}
}

type section struct{ name, body string }

// parseCase splits a txtar file into its comment and "-- NAME --" sections.
func parseCase(s string) (comment string, sections []section) {
	for i, part := range strings.Split("\n"+s, "\n-- ") {
		if i == 0 {
			comment = strings.TrimPrefix(part, "\n")
			continue
		}
		name, body, ok := strings.Cut(part, " --\n")
		if !ok { // an empty section right before the next
			name = strings.TrimSuffix(part, " --")
		}
		sections = append(sections, section{name, body})
	}
	return comment, sections
}

// additionalProperties cannot differ between two valid schema folders (the
// generator requires false on every object), but the rule still holds for
// the surface it describes: closing an object breaks, opening one does not.
func TestAdditionalProperties(t *testing.T) {
	open := &schema.Node{Type: "object"}
	closed := &schema.Node{Type: "object", AdditionalFalse: true}
	for _, dir := range []direction{accepted, produced} {
		d := &differ{}
		d.node("/x", open, closed, dir)
		if len(d.changes) != 1 || d.changes[0].Class != Breaking || d.changes[0].Path != "/x/additionalProperties" {
			t.Errorf("direction %d, open → closed: %v", dir, d.changes)
		}
		d = &differ{}
		d.node("/x", closed, open, dir)
		if len(d.changes) != 1 || d.changes[0].Class != Compatible {
			t.Errorf("direction %d, closed → open: %v", dir, d.changes)
		}
	}
}
