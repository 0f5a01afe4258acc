package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// Against the running server (issue 44, row 9): the proposals file is
// replaced by a symbolic link to another file while the server runs; the
// next proposal is refused, not appended through the link, and the
// link's target is untouched.
func TestProposalsFileSwappedForALink(t *testing.T) {
	bin := testkit.Binary(t)
	reg, key := proposalNode(t, bin, "")
	srv := testkit.Serve(t, bin, "--registry", reg, "--key-file", key)
	var cats gen.ListCategoriesOutput
	callTool(t, srv.URL, gen.ToolListCategories, map[string]any{}, &cats)
	report := map[string]any{"action": "report_dead_source", "slug": cats.Categories[0].Slug, "rank": 1, "reason": "It answers 404."}
	if a := testkit.CallTool(t, srv.URL, gen.ToolProposeChange, report); a.IsError {
		t.Fatalf("the first proposal: %s", a.Text)
	}

	// The target is as long as the proposals file, as an attacker who
	// copies it first makes it: an append checks the length it left.
	path := proposals.PathFor(reg)
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "someone-elses-file")
	if err := os.WriteFile(target, kept, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}

	// What went wrong is the server's, not the caller's: an internal
	// error to the client, the link named in the operator's log.
	_, body := testkit.PostMCP(t, srv.URL, "tools/call", map[string]any{"name": gen.ToolProposeChange, "arguments": report})
	if !strings.Contains(string(body), `"code":-32603`) {
		t.Errorf("a proposal through the link: %s; want an internal error", body)
	}
	testkit.WaitFor(t, "the log to name the symbolic link", 10*time.Second, func() bool {
		return strings.Contains(srv.Stderr(), "symbolic link")
	})
	if b, err := os.ReadFile(target); err != nil || string(b) != string(kept) {
		t.Errorf("the link's target now holds %q (%v), want it untouched", b, err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link at %s was replaced (%v), not refused", path, err)
	}
}
