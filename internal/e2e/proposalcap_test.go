package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// largeProposal is an add_category near the largest the schema allows
// (64 query patterns of nearly 500 characters): about 40 KB.
func largeProposal(n int) map[string]any {
	p := sqliteProposal()
	cat := p["category"].(map[string]any)
	var patterns []string
	for i := range 64 {
		patterns = append(patterns, fmt.Sprintf("learn sqlite %d %d ", n, i)+strings.Repeat("embedded database tutorial ", 17))
	}
	cat["query_patterns"] = patterns
	cat["description"] = strings.Repeat("Using SQLite, the embedded SQL database. ", 45)
	return p
}

// The flood of issue 44 row 1, on a real server with a 1 MiB cap: fill
// the proposals file, the curator rejects all pending with one admin
// call, refill, twice. The file never passes its cap, the refusal names
// the flag, each refill takes as many as the first, and after a restart
// the rejected proposals hold a digest, not their bodies.
func TestProposalsFileStaysWithinItsCap(t *testing.T) {
	bin := testkit.Binary(t)
	reg, key := proposalNode(t, bin, "")
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	out, err := exec.Command(bin, "token", "new", "--tokens", tokens, "--tier", "admin", "--name", "curator").Output()
	if err != nil {
		t.Fatal(err)
	}
	admin := []string{"Authorization", "Bearer " + strings.TrimSpace(string(out))}
	const max = 1 << 20
	args := []string{"--registry", reg, "--key-file", key, "--tokens", tokens, "--max-proposals-bytes", fmt.Sprint(max), "--proposal-rate", "1000"}
	srv := testkit.Serve(t, bin, args...)
	path := proposals.PathFor(reg)
	size := func() int64 {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	first := 0
	for round := range 3 {
		n := 0
		for ; ; n++ {
			a := testkit.CallTool(t, srv.URL, gen.ToolProposeChange, largeProposal(n))
			if a.IsError {
				if !strings.Contains(a.Text, "--max-proposals-bytes") {
					t.Fatalf("round %d, proposal %d refused, not for the cap: %s", round, n, a.Text)
				}
				break
			}
			if n > 100 {
				t.Fatalf("round %d: 100 proposals of 40 KB recorded under a 1 MiB cap", round)
			}
		}
		if s := size(); s > max {
			t.Fatalf("round %d: the proposals file is %d bytes, past its %d-byte cap", round, s, max)
		}
		if round == 0 {
			first = n
		} else if n < first*3/4 {
			t.Errorf("round %d: %d proposals fitted after the rejection, %d the first time", round, n, first)
		}
		status, body := testkit.PostMCP(t, srv.URL, "tools/call", map[string]any{"name": gen.ToolRejectProposal, "arguments": map[string]any{"all_pending": true, "reason": "a flood"}}, admin...)
		var res struct {
			Result struct {
				Structured struct {
					Count int `json:"count"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(body, &res); err != nil || status != http.StatusOK || res.Result.Structured.Count != n {
			t.Fatalf("round %d: reject_proposal all_pending: HTTP %d %s; want %d rejected", round, status, body, n)
		}
	}
	stop(t, srv)
	srv = testkit.Serve(t, bin, args...)
	var list gen.ListProposalsOutput
	callTool(t, srv.URL, gen.ToolListProposals, map[string]any{"status": "pending"}, &list)
	if list.Pending != 0 {
		t.Errorf("%d pending after rejecting all", list.Pending)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.Contains(line, `"category":`) || !strings.Contains(line, `"digest":"sha256:`) {
			t.Fatalf("a rejected proposal kept its body, or has no digest: %.200s", line)
		}
	}
	if s := size(); s > max/4 {
		t.Errorf("after rejecting all and restarting, the file is %d bytes", s)
	}
}
