package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// lockedBuffer is a buffer a running server writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveInProcess runs 3gs serve on regPath with the curator key (none
// when keyPath is ""), on 127.0.0.1, until the test ends, and waits for
// its local channel.
func serveInProcess(t *testing.T, regPath, keyPath string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &lockedBuffer{}
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: logs, Getenv: func(string) string { return "" }}
	done := make(chan struct{})
	code := 0
	go func() {
		defer close(done)
		args := []string{"serve", "--registry", regPath, "--http", "127.0.0.1:0"}
		if keyPath != "" {
			args = append(args, "--key-file", keyPath)
		}
		code = Run(ctx, args, env)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	testkit.WaitFor(t, "the server's local channel", 20*time.Second, func() bool {
		select {
		case <-done:
			t.Fatalf("serve exited %d:\n%s", code, logs.String())
		default:
		}
		_, err := os.Stat(app.LocalSocket(regPath))
		return err == nil
	})
}

// auditEntries reads the audit log beside regPath.
func auditEntries(t *testing.T, regPath string) []*gen.AuditEntry {
	t.Helper()
	data, err := os.ReadFile(regPath + ".audit.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out []*gen.AuditEntry
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		e, err := gen.DecodeAuditEntry(line)
		if err != nil {
			t.Fatalf("audit entry %s: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

// decisionOf is the decision recorded on proposal id beside regPath.
func decisionOf(t *testing.T, regPath, id string) *proposals.Proposal {
	t.Helper()
	ps, err := proposals.Read(proposals.PathFor(regPath))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no proposal %s", id)
	return nil
}

// With a server holding the registry, proposals accept and reject decide
// through it (its admin tools, over the local channel) instead of
// refusing, and endorse adds and removes endorsements through it: the
// change is served, signed and recorded with what it was, and the
// decisions name the local user, as they do without a server. Before:
// "decide through it: call accept_proposal with an admin token", and
// endorse said "Stop that server".
func TestCuratorActsThroughRunningServer(t *testing.T) {
	_, keyPath, _, regPath := curatorSetup(t)
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatalf("sign: %s", errOut)
	}
	reg, _ := registry.LoadFile(regPath)
	slug := reg.Categories()[0].Slug
	remove := proposed(t, regPath, gen.ProposalRecord{Action: gen.ProposalActionRemoveCategory, Slug: slug, Reason: "duplicate"})
	report := proposed(t, regPath, gen.ProposalRecord{Action: gen.ProposalActionReportDeadSource, Slug: slug, Rank: ptr(1), Reason: "gone"})
	serveInProcess(t, regPath, keyPath)

	code, out, errOut := run(t, nil, "proposals", "accept", remove, "--registry", regPath, "--reason", "a duplicate indeed")
	if code != ExitOK || !strings.Contains(out, "Done by the 3gs server editing") || !strings.Contains(out, "Accepted proposal "+remove) {
		t.Fatalf("accept through the server: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, nil, "proposals", "reject", report, "--registry", regPath, "--reason", "it answers")
	if code != ExitOK || !strings.Contains(out, "Rejected proposal "+report) {
		t.Fatalf("reject through the server: exit %d\n%s%s", code, out, errOut)
	}
	// A refusal of the tool comes back as the command's failure.
	code, _, errOut = run(t, nil, "proposals", "accept", remove, "--registry", regPath)
	if code != ExitFail || !strings.Contains(errOut, "answered") || !strings.Contains(errOut, "decided") {
		t.Errorf("accepting a decided proposal: exit %d, %s", code, errOut)
	}

	after, _ := registry.LoadFile(regPath)
	if _, still := after.Category(slug); still || after.Version() == reg.Version() {
		t.Errorf("the accepted removal is not in the file: version %s", after.Version())
	}
	if code, out, errOut := run(t, nil, "verify", regPath); code != ExitOK || !strings.HasPrefix(out, "OK") {
		t.Errorf("verify: %s%s", out, errOut)
	}
	if code, _, errOut := run(t, nil, "audit", "verify", regPath); code != ExitOK {
		t.Errorf("audit verify: %s", errOut)
	}
	es := auditEntries(t, regPath)
	last := es[len(es)-1]
	if last.Action != gen.AuditActionRemove || last.Actor != proposals.Actor(remove, app.LocalActor()) || last.Detail == nil || *last.Detail != "accept proposal "+remove+": a duplicate indeed" {
		t.Errorf("the accept's audit entry: %+v", last)
	}
	if p := decisionOf(t, regPath, report); p.Status != gen.ProposalStatusRejected || p.Decision.Actor != app.LocalActor() || p.Decision.Reason == nil || *p.Decision.Reason != "it answers" {
		t.Errorf("the rejection: %+v %+v", p, p.Decision)
	}
	if p := decisionOf(t, regPath, remove); p.Status != gen.ProposalStatusAccepted || p.Decision.Actor != app.LocalActor() {
		t.Errorf("the acceptance: %+v %+v", p, p.Decision)
	}

	other := peerKey(t)
	code, out, errOut = run(t, nil, "endorse", regPath, "--pubkey", other, "--url", "https://coffee.example", "--name", "Coffee")
	if code != ExitOK || !strings.Contains(out, "Endorsed Coffee ("+other+") at https://coffee.example") {
		t.Fatalf("endorse through the server: exit %d\n%s%s", code, out, errOut)
	}
	if _, xs := endorsements(t, regPath); len(xs) != 1 || xs[0].Pubkey != other || xs[0].URL != "https://coffee.example" {
		t.Errorf("endorsements in the file: %+v", xs)
	}
	es = auditEntries(t, regPath)
	if last := es[len(es)-1]; last.Action != gen.AuditActionEndorse || last.Actor != app.LocalActor() || last.Detail == nil || *last.Detail != "endorse add "+other+" https://coffee.example" || last.Signature == nil {
		t.Errorf("the endorsement's audit entry: %+v", last)
	}
	if code, _, errOut := run(t, nil, "endorse", regPath, "--pubkey", other, "--url", "https://coffee.example"); code != ExitOK {
		t.Errorf("the same endorsement again: exit %d %s", code, errOut)
	}
	if n := len(auditEntries(t, regPath)); n != len(es) {
		t.Errorf("an unchanged endorsement was recorded: %d entries, was %d", n, len(es))
	}
	code, out, errOut = run(t, nil, "endorse", regPath, "--remove", other)
	if code != ExitOK || !strings.Contains(out, "Removed the endorsement of Coffee") {
		t.Fatalf("endorse --remove through the server: exit %d\n%s%s", code, out, errOut)
	}
	es = auditEntries(t, regPath)
	if last := es[len(es)-1]; last.Detail == nil || *last.Detail != "endorse remove "+other {
		t.Errorf("the removal's audit entry: %+v", last)
	}
	if code, _, errOut := run(t, nil, "endorse", regPath, "--remove", other); code != ExitFail || !strings.Contains(errOut, "does not endorse") {
		t.Errorf("removing an endorsement twice: exit %d %s", code, errOut)
	}
	if code, out, errOut := run(t, nil, "verify", regPath); code != ExitOK || !strings.HasPrefix(out, "OK") {
		t.Errorf("verify after the endorsements: %s%s", out, errOut)
	}

	// The channel answers as an MCP server would: a tool it does not
	// have, and arguments the tool's schema refuses, each with its path.
	var ce *app.CallError
	if _, err := app.CallTool(regPath, "no_such_tool", map[string]any{}); !errors.As(err, &ce) || ce.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("an unknown tool: %v", err)
	}
	if _, err := app.CallTool(regPath, "remove_category", map[string]any{"slug": "Not A Slug"}); !errors.As(err, &ce) || ce.Code != jsonrpc.CodeInvalidParams || len(ce.Problems) == 0 || ce.Problems[0].Path != "slug" {
		t.Errorf("arguments the schema refuses: %v", err)
	}
	for _, c := range []struct {
		args map[string]any
		path string
	}{
		{map[string]any{"pubkey": other}, "url"},
		{map[string]any{"pubkey": other, "url": "https://coffee.example", "remove": true}, "remove"},
		{map[string]any{"pubkey": other, "remove": false}, "remove"},
		{map[string]any{"pubkey": other, "url": "ftp://coffee.example"}, "url"},
	} {
		if _, err := app.CallTool(regPath, "endorse_curator", c.args); !errors.As(err, &ce) || ce.Code != jsonrpc.CodeInvalidParams || len(ce.Problems) == 0 || ce.Problems[0].Path != c.path {
			t.Errorf("endorse_curator %v: %v, want a problem at %s", c.args, err, c.path)
		}
	}
	// And the sign line still works: the file as served is reloaded.
	if answered, ok, text := app.AskToSign(regPath); !answered || !ok || !strings.Contains(text, "verified by its curator's signature") {
		t.Errorf("sign with nothing edited: answered %v, ok %v, %q", answered, ok, text)
	}
}

// A server without the curator key holds the registry too, and opens
// the channel: a decision that changes nothing is made through it, while
// a change the registry's signature would need the key for, and a hand
// edit to sign, are refused with why and what to do.
func TestKeylessServerChannel(t *testing.T) {
	dir, keyPath, _, regPath := curatorSetup(t)
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatalf("sign: %s", errOut)
	}
	reg, _ := registry.LoadFile(regPath)
	report := proposed(t, regPath, gen.ProposalRecord{Action: gen.ProposalActionReportDeadSource, Slug: reg.Categories()[0].Slug, Rank: ptr(1), Reason: "gone"})
	serveInProcess(t, regPath, "")

	if code, out, errOut := run(t, nil, "proposals", "reject", report, "--registry", regPath, "--reason", "it answers"); code != ExitOK || !strings.Contains(out, "Rejected proposal "+report) {
		t.Errorf("reject through a keyless server: exit %d\n%s%s", code, out, errOut)
	}
	file := filepath.Join(dir, "cat.json")
	os.WriteFile(file, newCategory(t, regPath, "Zig"), 0o644)
	before, _ := os.ReadFile(regPath)
	if code, _, errOut := run(t, nil, "category", "add", "zig-learning", "--registry", regPath, "--file", file); code != ExitFail || !strings.Contains(errOut, "--key-file") {
		t.Errorf("a change through a keyless server: exit %d %s", code, errOut)
	}
	if after, _ := os.ReadFile(regPath); !bytes.Equal(before, after) {
		t.Error("a refused change wrote the file")
	}
	if answered, ok, text := app.AskToSign(regPath); !answered || ok || !strings.Contains(text, "no curator key") {
		t.Errorf("sign through a keyless server: answered %v, ok %v, %q", answered, ok, text)
	}
}

// A decision is signed with the curator key whichever way it is made:
// by the command holding --key-file, or by the running server holding
// its own; proposals show checks it against the registry's key, and says
// so of one made without a key. Before, decisions were stored unsigned.
func TestDecisionsSignedEitherPath(t *testing.T) {
	_, keyPath, _, regPath := curatorSetup(t)
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatalf("sign: %s", errOut)
	}
	reg, _ := registry.LoadFile(regPath)
	slug := reg.Categories()[0].Slug
	var ids [3]string
	for i := range ids {
		ids[i] = proposed(t, regPath, gen.ProposalRecord{Action: gen.ProposalActionReportDeadSource, Slug: slug, Rank: ptr(i + 1), Reason: "gone"})
	}
	show := func(id string) (int, string) {
		t.Helper()
		code, out, errOut := run(t, nil, "proposals", "show", id, "--registry", regPath)
		return code, out + errOut
	}
	if code, _, errOut := run(t, nil, "proposals", "reject", ids[0], "--registry", regPath, "--reason", "no key"); code != ExitOK {
		t.Fatalf("reject without a key: exit %d %s", code, errOut)
	}
	if code, out := show(ids[0]); code != ExitOK || !strings.Contains(out, "Decision signature: none") {
		t.Errorf("show of a decision made without a key: exit %d\n%s", code, out)
	}
	if code, _, errOut := run(t, nil, "proposals", "reject", ids[1], "--registry", regPath, "--reason", "it answers", "--key-file", keyPath); code != ExitOK {
		t.Fatalf("reject with the key: exit %d %s", code, errOut)
	}
	if code, out := show(ids[1]); code != ExitOK || !strings.Contains(out, "Decision signature: verified with the registry's curator key") {
		t.Errorf("show of the command's signed decision: exit %d\n%s", code, out)
	}
	serveInProcess(t, regPath, keyPath)
	if code, _, errOut := run(t, nil, "proposals", "reject", ids[2], "--registry", regPath, "--reason", "it answers"); code != ExitOK {
		t.Fatalf("reject through the server: exit %d %s", code, errOut)
	}
	if code, out := show(ids[2]); code != ExitOK || !strings.Contains(out, "Decision signature: verified with the registry's curator key") {
		t.Errorf("show of the server's signed decision: exit %d\n%s", code, out)
	}
}
