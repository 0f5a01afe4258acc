package tools

import (
	"errors"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
)

// A failed edit says "Nothing was changed." once, after one full stop,
// whatever its reason ends with.
func TestEditFailureSaysItOnce(t *testing.T) {
	for _, reason := range []string{
		"Cannot change the registry: the file is locked",
		"Cannot change the registry: the file is locked.",
		"the audit log x does not verify at seq 3. Nothing was changed. 3gs audit verify shows the whole log",
		errNoFile,
	} {
		var te *gen.ToolError
		if !errors.As(editFailure(reason, &gen.RemoveCategoryOutput{}), &te) {
			t.Fatalf("%q: not a tool error", reason)
		}
		if strings.Contains(te.Text, "..") || strings.Count(te.Text, "Nothing was changed") != 1 || !strings.HasSuffix(te.Text, ".") {
			t.Errorf("%q gives %q", reason, te.Text)
		}
	}
}
