package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// The first steps of docs/curating.md, run as written in an empty
// directory, each succeed: the page used to start with
// `cp registry.json my.json`, which failed twice (no signature of yours,
// our curator key).
func TestCuratingDocFirstStepsWork(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "curating.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Curate your own registry")
	if !ok {
		t.Fatal("docs/curating.md has no 'Curate your own registry' section")
	}
	_, block, ok := strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatal("no sh block in the section")
	}
	block, _, _ = strings.Cut(block, "```")
	t.Chdir(t.TempDir())
	ran := 0
	for _, line := range strings.Split(block, "\n") {
		line, _, _ = strings.Cut(line, "#")
		w := testkit.ShellWords(strings.TrimSpace(line))
		if len(w) == 0 {
			continue
		}
		if w[0] != "3gs" {
			t.Fatalf("a step that is not a 3gs command: %q", line)
		}
		if code, out, errOut := run(t, nil, w[1:]...); code != ExitOK {
			t.Errorf("%q: exit %d\n%s%s", line, code, out, errOut)
		}
		ran++
	}
	if ran < 4 {
		t.Errorf("ran %d steps", ran)
	}
}

// Smaller wordings a newcomer tripped on: the embedded registry's expiry
// is logged as exempt (not 0001-01-01), and token new says to signal the
// server that reads the tokens file, not every 3gs on the machine.
func TestNewcomerWordings(t *testing.T) {
	code, _, errOut := serveLines(t, nil, nil)
	if code != ExitOK || !strings.Contains(errOut, `expires="never: the embedded registry is exempt"`) || strings.Contains(errOut, "0001-01-01") {
		t.Errorf("serve: exit %d\n%s", code, errOut)
	}
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	code, _, errOut = run(t, nil, "token", "new", "--tokens", tokens, "--tier", "admin", "--name", "root")
	if code != ExitOK || strings.Contains(errOut, "pidof") || !strings.Contains(errOut, "the 3gs serve that reads "+tokens) {
		t.Errorf("token new: exit %d\n%s", code, errOut)
	}
}

// docs/curating.md links the field reference of registry.json, the
// registry.json section of schema/CONTRACT.md, at an anchor that heading
// gives: a curator editing the file learns each field's type and bounds
// there. Before, the page named no reference.
func TestCuratingDocLinksTheFieldReference(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "curating.md"))
	if err != nil {
		t.Fatal(err)
	}
	const link = "](../schema/CONTRACT.md#registryjson)"
	if !strings.Contains(string(doc), link) {
		t.Errorf("docs/curating.md does not link the field reference (%s)", link)
	}
	contract, err := os.ReadFile(filepath.Join("..", "..", "schema", "CONTRACT.md"))
	if err != nil {
		t.Fatal(err)
	}
	// GitHub's anchor for "## registry.json" drops the dot.
	if !strings.Contains(string(contract), "\n## registry.json\n") {
		t.Error("schema/CONTRACT.md has no '## registry.json' section for #registryjson")
	}
}
