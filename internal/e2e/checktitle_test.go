package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// A page title with control, text-direction, zero-width and tag
// characters is printed by 3gs check --json, and kept in the health file
// the server publishes, without them; the words stay. The real CLI
// against pages on loopback.
func TestCheckTitlesHaveNoHiddenCharacters(t *testing.T) {
	bin := testkit.Binary(t)
	hostile := "<html><head><title>\x1b[2J\x1b]0;owned\x07Docs \u202eevil\u2066 home\u200b\U000E0041</title></head><body>page</body></html>"
	site := testkit.Site(t, map[string]string{"/a": hostile, "/b": hostile, "/c": hostile})
	path := writeRegistry(t, []string{site.URL + "/a", site.URL + "/b", site.URL + "/c"}, site.URL)
	code, out, errOut, _ := runCheck(t, bin, path, "--delay", "1ms", "--timeout", "5s", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	file, err := os.ReadFile(sourcehealth.PathFor(path))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"3gs check --json": out, "the health file": string(file)} {
		doc, err := gen.DecodeSourcehealth([]byte(data))
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, data)
		}
		for _, c := range doc.Sources {
			if c.Title == nil || !strings.Contains(*c.Title, "Docs evil home") || strings.IndexFunc(*c.Title, registry.Hidden) >= 0 {
				t.Errorf("%s: %s has the title %q; want the words without hidden characters", name, c.URL, deref(c.Title))
			}
		}
	}
}
