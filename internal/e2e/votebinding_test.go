package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// initNode makes a curator's node with 3gs init and returns its registry,
// its key file and its curator key (pk:...).
func initNode(t *testing.T, bin, name string) (reg, key, pk string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	out := runOK(t, bin, "init", dir, "--name", name)
	pk = regexp.MustCompile(`pk:[a-z0-9]{52}`).FindString(out)
	return filepath.Join(dir, "registry.json"), filepath.Join(dir, "curator.key"), pk
}

// replayer is another node on loopback that passes every request on to
// target and its answers back unchanged, so it answers with target's
// curator key; it records the tools called through it.
func replayer(t *testing.T, target string) (srv *httptest.Server, tools func() []string) {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	proxy := httputil.NewSingleHostReverseProxy(to)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Mcp-Name"))
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// A vote names the node's curator key, and a node that answers with
// another node's key would get a vote it can replay there. The voter's own
// registry endorses the victim node under its URL and another curator
// under the attacker's; that node answers with the victim's key, and 3gs
// proposals vote through it refuses before signing, naming the key it
// answered with, and no vote reaches either node; through the victim's
// own URL the vote counts.
// Real processes on loopback; the replaying node is a loopback proxy.
func TestVoteBoundToTheNodeMeant(t *testing.T) {
	bin := testkit.Binary(t)
	victimReg, victimKey, victimPK := initNode(t, bin, "victim")
	voterReg, voterKey, voterPK := initNode(t, bin, "voter")
	runOK(t, bin, "endorse", "--pubkey", voterPK, "--url", "https://voter.example", "--key-file", victimKey, victimReg)
	srv := testkit.Serve(t, bin, "--registry", victimReg, "--key-file", victimKey)
	victim := nodeURL(srv.URL)
	runOK(t, bin, "endorse", "--pubkey", victimPK, "--url", victim, "--key-file", voterKey, voterReg)
	attacker, tools := replayer(t, victim)
	_, _, attackerPK := initNode(t, bin, "attacker")
	runOK(t, bin, "endorse", "--pubkey", attackerPK, "--url", attacker.URL, "--key-file", voterKey, voterReg)

	var proposed gen.ProposeChangeOutput
	callTool(t, srv.URL, gen.ToolProposeChange, sqliteProposal(), &proposed)
	id := *proposed.ID

	// The voter's registry through its environment twin, as a curator
	// who serves it has REGISTRY_PATH set.
	vote := func(node string) (int, string) {
		cmd := exec.Command(bin, "proposals", "vote", id, "oppose", "--key-file", voterKey, "--node", node)
		cmd.Env = append(os.Environ(), "REGISTRY_PATH="+voterReg)
		out, err := cmd.CombinedOutput()
		return exitCode(err), string(out)
	}
	code, out := vote(attacker.URL)
	if code == 0 || !strings.Contains(out, "nothing signed") || !strings.Contains(out, victimPK) {
		t.Errorf("voting through a node that answers with the victim's key: exit %d\n%s\nwant a refusal naming the key it answered with", code, out)
	}
	for _, tool := range tools() {
		if tool == gen.ToolVoteProposal {
			t.Errorf("a vote was sent through the replaying node (tools called through it: %v)", tools())
		}
	}
	var shown gen.GetProposalOutput
	callTool(t, srv.URL, gen.ToolGetProposal, map[string]any{"id": id}, &shown)
	if p := shown.Proposal; p == nil || p.Support+p.Oppose != 0 {
		t.Fatalf("the victim node counted a vote: %+v", shown.Proposal)
	}

	if code, out := vote(victim); code != 0 || !strings.Contains(out, "0 for, 1 against") {
		t.Errorf("voting through the node the voter's registry endorses: exit %d\n%s", code, out)
	}
}
