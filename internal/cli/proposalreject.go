package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/proposals"
)

// proposalsRejectOptions are reject's filters: the curator's way out of a
// flood, as reject_proposal's are.
type proposalsRejectOptions struct {
	allPending        bool
	olderThan, client string
}

func proposalsRejectFlags(f *Flags) {
	proposalsDecideFlags(f)
	o := options[proposalsRejectOptions](f)
	f.BoolVar(&o.allPending, "all-pending", "THREEGS_REJECT_ALL_PENDING", "reject every pending proposal")
	f.StringVar(&o.olderThan, "older-than", "THREEGS_REJECT_OLDER_THAN", "", "reject the pending proposals made longer ago than a duration (72h, 3d) or before a time (2026-12-01T10:00:00Z, 2026-12-01)")
	f.StringVar(&o.client, "client", "THREEGS_REJECT_CLIENT", "", "reject the pending proposals sent from an IP address or prefix (192.0.2.1, 2001:db8:1:2::/64), as 3gs proposals show prints it")
}

// rejectSelection is what reject's arguments and flags choose: ids, or
// exactly one filter.
func rejectSelection(f *Flags, now time.Time) (proposals.Selection, error) {
	o := options[proposalsRejectOptions](f)
	var sel proposals.Selection
	var chosen []string
	if ids := f.Args(); len(ids) > 0 {
		for _, id := range ids {
			if !proposals.ValidID(id) {
				return sel, fmt.Errorf("%q is not a proposal id (p and 16 hex digits, as 3gs proposals list shows)", id)
			}
		}
		sel.IDs, chosen = ids, append(chosen, "proposal ids")
	}
	if o.allPending {
		sel.AllPending, chosen = true, append(chosen, "--all-pending")
	}
	var err error
	if o.olderThan != "" {
		if sel.OlderThan, err = proposals.ParseOlderThan(o.olderThan, now); err != nil {
			return sel, fmt.Errorf("--older-than: %w", err)
		}
		chosen = append(chosen, "--older-than")
	}
	if o.client != "" {
		if sel.FromClient, err = proposals.ParseClient(o.client); err != nil {
			return sel, fmt.Errorf("--client: %w", err)
		}
		chosen = append(chosen, "--client")
	}
	if len(chosen) != 1 {
		return sel, fmt.Errorf("choose the proposals one way: proposal ids, --all-pending, --older-than D or --client ADDR (got %s), e.g. 3gs proposals reject --older-than 24h --reason TEXT --registry R", orNone(chosen))
	}
	return sel, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " and ")
}

// rejectArgs are reject_proposal's arguments, as 3gs proposals reject
// sends them to the server holding the registry.
type rejectArgs struct {
	ID         string   `json:"id,omitempty"`
	IDs        []string `json:"ids,omitempty"`
	AllPending bool     `json:"all_pending,omitempty"`
	OlderThan  string   `json:"older_than,omitempty"`
	FromClient string   `json:"from_client,omitempty"`
	Reason     string   `json:"reason"`
}

// rejectArgsOf is what reject's arguments and flags chose (sel), as
// reject_proposal's arguments: the filters as typed, which the tool reads
// as this command does.
func rejectArgsOf(f *Flags, sel proposals.Selection, reason string) rejectArgs {
	o := options[proposalsRejectOptions](f)
	a := rejectArgs{AllPending: sel.AllPending, OlderThan: o.olderThan, FromClient: o.client, Reason: reason}
	if len(sel.IDs) == 1 {
		a.ID = sel.IDs[0]
	} else {
		a.IDs = sel.IDs
	}
	return a
}

func runProposalsReject(_ context.Context, env *Env, f *Flags) int {
	reg, ok := proposalsRegistry(env, "reject", f)
	if !ok {
		return ExitUsage
	}
	sel, err := rejectSelection(f, time.Now())
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs proposals reject: %v\n", err)
		return ExitUsage
	}
	o := options[proposalsOptions](f)
	reason := o.reason
	if reason == "" {
		fmt.Fprintln(env.Stderr, "3gs proposals reject: say why with --reason TEXT; it is shown with the decision")
		return ExitUsage
	}
	// The key signs the decision (a running server signs with its own).
	sg, err := o.signer(env, "proposals reject")
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs proposals reject: %v\n", err)
		return ExitUsage
	}
	w, ok := takeWriter(env, "proposals reject", reg)
	if !ok {
		return ExitFail
	}
	defer w.release()
	if w.server {
		return w.callServer(env, "proposals reject", reg, "reject_proposal", rejectArgsOf(f, sel, reason), false)
	}
	s, ok := openProposals(env, "reject", reg)
	if !ok {
		return ExitFail
	}
	defer s.Close()
	// The same workflow as the reject_proposal tool's (curation.Node.Reject).
	node := curation.NewFile(sg.file(env, "proposals reject", reg, auditLogPath(o.auditLog, reg)))
	node.SetProposals(s)
	ids, err := node.Reject(app.LocalActor(), sel, reason)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs proposals reject: %v\n", err)
		return ExitFail
	}
	switch len(ids) {
	case 0:
		fmt.Fprintln(env.Stdout, "No pending proposal matched; nothing was rejected.")
	case 1:
		fmt.Fprintf(env.Stdout, "Rejected proposal %s; the registry is unchanged.\n", ids[0])
	default:
		fmt.Fprintf(env.Stdout, "Rejected %d proposals; the registry is unchanged:\n", len(ids))
		for _, id := range ids {
			fmt.Fprintln(env.Stdout, id)
		}
	}
	return ExitOK
}
