package cli

import (
	"github.com/three-good-sources/3gs/gen"

	"os"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// proposed records a proposal beside the registry at regPath, as a server
// would, and returns its id.
func proposed(t *testing.T, regPath string, p gen.ProposalRecord) string {
	t.Helper()
	s, _, err := proposals.Open(proposals.PathFor(regPath), proposals.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, err := s.Add(p)
	if err != nil {
		t.Fatal(err)
	}
	return rec.ID
}

func ptr[T any](v T) *T { return &v }

func TestProposalsAcceptAndReject(t *testing.T) {
	_, keyPath, _, regPath := curatorSetup(t)
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatalf("sign: %s", errOut)
	}
	reg, _ := registry.LoadFile(regPath)
	slug := reg.Categories()[0].Slug
	remove := proposed(t, regPath, gen.ProposalRecord{Action: gen.ProposalActionRemoveCategory, Slug: slug, Reason: "duplicate"})
	report := proposed(t, regPath, gen.ProposalRecord{Action: gen.ProposalActionReportDeadSource, Slug: slug, Rank: ptr(1), Reason: "gone"})

	if code, _, errOut := run(t, nil, "proposals", "reject", report, "--registry", regPath); code != ExitUsage || !strings.Contains(errOut, "--reason") {
		t.Errorf("reject without a reason: exit %d, %s", code, errOut)
	}
	if code, _, errOut := run(t, nil, "proposals", "reject", report, "--registry", regPath, "--reason", "it answers"); code != ExitOK {
		t.Fatalf("reject: %s", errOut)
	}
	if code, _, errOut := run(t, nil, "proposals", "accept", remove, "--registry", regPath); code != ExitFail || !strings.Contains(errOut, "--key-file") {
		t.Errorf("accepting a change to a signed registry without the key: exit %d, %s", code, errOut)
	}
	code, out, errOut := run(t, nil, "proposals", "accept", remove, "--registry", regPath, "--key-file", keyPath)
	if code != ExitOK || !strings.Contains(out, "Accepted proposal "+remove) {
		t.Fatalf("accept: exit %d\n%s%s", code, out, errOut)
	}
	if after, _ := registry.LoadFile(regPath); after == nil || len(after.Categories()) != len(reg.Categories())-1 {
		t.Error("the accepted removal is not in the registry")
	}
	if code, _, errOut := run(t, nil, "audit", "verify", regPath); code != ExitOK {
		t.Errorf("audit verify after accepting: %s", errOut)
	}
	_, out, _ = run(t, nil, "proposals", "list", "--registry", regPath)
	if !strings.Contains(out, remove+"  accepted") || !strings.Contains(out, report+"  rejected") {
		t.Errorf("list after deciding:\n%s", out)
	}
}

// While something holds the registry's lock and no server answers on its
// local channel (with one, the CLI decides through it: see
// TestCuratorActsThroughRunningServer), the CLI decides nothing and says
// how to: stop the server.
func TestProposalsDecideNothingBehindAServer(t *testing.T) {
	_, _, _, regPath := curatorSetup(t)
	id := proposed(t, regPath, gen.ProposalRecord{Action: gen.ProposalActionReportDeadSource, Slug: "rust-learning", Rank: ptr(1), Reason: "gone"})
	lock, err := safefile.TryLock(regPath)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	before, _ := os.ReadFile(proposals.PathFor(regPath))
	code, _, errOut := run(t, nil, "proposals", "reject", id, "--registry", regPath, "--reason", "no")
	if code != ExitFail || !strings.Contains(errOut, "local channel") || !strings.Contains(errOut, "Stop that server") {
		t.Errorf("reject with the lock held: exit %d, %s", code, errOut)
	}
	if after, _ := os.ReadFile(proposals.PathFor(regPath)); string(after) != string(before) {
		t.Error("the proposals file changed")
	}
}

func TestProposalsAcceptRefusesToBlessATamperedFile(t *testing.T) {
	_, keyPath, _, regPath := curatorSetup(t)
	run(t, nil, "sign", "--key-file", keyPath, regPath)
	if code, _, errOut := run(t, nil, "endorse", regPath, "--pubkey", peerKey(t), "--url", "https://slipped.example"); code != ExitOK {
		t.Fatalf("unsigned endorse: %s", errOut)
	}
	id := proposed(t, regPath, gen.ProposalRecord{Action: gen.ProposalActionRemoveCategory, Slug: "rust-learning", Reason: "r"})
	before, _ := os.ReadFile(regPath)
	code, _, errOut := run(t, nil, "proposals", "accept", id, "--registry", regPath, "--key-file", keyPath)
	if code != ExitFail || !strings.Contains(errOut, "does not verify") {
		t.Fatalf("exit %d, %s; want a refusal", code, errOut)
	}
	if after, _ := os.ReadFile(regPath); string(after) != string(before) {
		t.Error("the registry was changed")
	}
}

// A crash after the change was written and before the decision was (the
// proposals file as it was before accepting): accepting again records the
// decision, with the version the audit log names, and changes nothing.
func TestProposalsAcceptAfterACrashRecordsTheChangeMadeAlready(t *testing.T) {
	_, keyPath, _, regPath := curatorSetup(t)
	run(t, nil, "sign", "--key-file", keyPath, regPath)
	reg, _ := registry.LoadFile(regPath)
	id := proposed(t, regPath, gen.ProposalRecord{Action: gen.ProposalActionRemoveCategory, Slug: reg.Categories()[0].Slug, Reason: "duplicate"})
	pending, _ := os.ReadFile(proposals.PathFor(regPath))
	if code, out, errOut := run(t, nil, "proposals", "accept", id, "--registry", regPath, "--key-file", keyPath); code != ExitOK {
		t.Fatalf("accept: exit %d\n%s%s", code, out, errOut)
	}
	applied, _ := os.ReadFile(regPath)
	os.WriteFile(proposals.PathFor(regPath), pending, 0o600)

	code, out, errOut := run(t, nil, "proposals", "accept", id, "--registry", regPath, "--key-file", keyPath)
	if code != ExitOK || !strings.Contains(out, "applied already") {
		t.Fatalf("accepting again after the crash: exit %d\n%s%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(regPath); string(after) != string(applied) {
		t.Error("the change was applied twice")
	}
	ps, _ := proposals.Read(proposals.PathFor(regPath))
	if len(ps) != 1 || ps[0].Status != gen.ProposalStatusAccepted || ps[0].Decision.Version == nil || *ps[0].Decision.Version == "" {
		t.Errorf("the proposal after accepting again: %+v", ps[0])
	}
}
