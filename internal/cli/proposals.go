package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/three-good-sources/3gs/gen"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// The public proposes changes (propose_change), endorsed curators vote,
// the curator decides: internal/proposals keeps them beside the registry.
// These verbs are the curator's side, and an endorsed curator's vote.

// proposalsSubcommands are the verbs of `3gs proposals`.
var proposalsSubcommands = []command{
	{"list", "", "list the proposals made to a registry, oldest first, with their status and votes (--status pending: those to decide)", proposalsReadFlags, runProposalsList},
	{"show", "ID", "show one proposal in full: the change, the reason, the votes and the decision", proposalsReadFlags, runProposalsShow},
	{"accept", "ID", "apply a pending proposal to the registry (recorded in the audit log, version raised, signed with --key-file) and record the decision", proposalsDecideFlags, runProposalsAccept},
	{"reject", "ID...", "reject pending proposals, recording --reason: those named, or all chosen by --all-pending, --older-than D or --client ADDR", proposalsRejectFlags, runProposalsReject},
	{"vote", "ID support|oppose", "as a curator the node endorses, sign a vote on one of its proposals with --key-file and send it to --node", proposalsVoteFlags, runProposalsVote},
}

// proposalServeOptions are serve's (and doctor's) flags for proposals.
type proposalServeOptions struct {
	take                                            string
	maxPending, maxBytes, rate, totalRate, v6prefix intFlag
	retention                                       durationFlag
}

func proposalFlags(f *Flags) {
	o := options[proposalServeOptions](f)
	f.StringVar(&o.take, "proposals", "THREEGS_PROPOSALS", "auto", "take proposals from anyone (propose_change, list_proposals, get_proposal, vote_proposal; tools/list shows them only then): on, off, or auto, on for a --registry PATH this server edits and off for the embedded registry")
	f.IntVar(&o.maxPending, "max-pending-proposals", "THREEGS_MAX_PENDING_PROPOSALS", strconv.Itoa(proposals.DefaultMaxPending), 1, "proposals (propose_change) that may wait for the curator at once; past it new ones are refused until some are decided")
	f.IntVar(&o.maxBytes, "max-proposals-bytes", "THREEGS_MAX_PROPOSALS_BYTES", strconv.Itoa(proposals.DefaultMaxBytes), 4*proposals.MaxLine, "cap on the proposals file, pending and decided proposals together, in bytes (64 MiB by default); decided proposals lose their bodies a day after the decision, or at once when the file nears the cap, and new proposals are refused while pending ones alone fill it")
	f.DurationVar(&o.retention, "proposal-retention", "THREEGS_PROPOSAL_RETENTION", proposals.DefaultRetention.String(), "how long an accepted or rejected proposal is kept (and shown) after its decision")
	f.IntVar(&o.rate, "proposal-rate", "THREEGS_PROPOSAL_RATE", strconv.Itoa(proposals.DefaultRate), 1, "proposals one client may have recorded per hour, counted per session and per address (an IPv6 address by its --proposal-ipv6-prefix); invalid proposals are not counted. Behind a reverse proxy every client has the proxy's address, so they share one allowance")
	f.IntVar(&o.totalRate, "proposal-rate-total", "THREEGS_PROPOSAL_RATE_TOTAL", strconv.Itoa(proposals.DefaultTotalRate), 1, "proposals the server records per hour from all clients together, so that a flood from many addresses stays what one curator can read")
	f.IntVar(&o.v6prefix, "proposal-ipv6-prefix", "THREEGS_PROPOSAL_IPV6_PREFIX", strconv.Itoa(proposals.DefaultIPv6Prefix), 16, "prefix length an IPv6 client is counted by for --proposal-rate: a /64 by default, what one site is given; 48 counts a whole site as one client (at most 128)")
}

// proposalsOptions are the flags of the proposals verbs.
type proposalsOptions struct {
	status, reason string
	signedWrite
}

func proposalsReadFlags(f *Flags) {
	o := options[proposalsOptions](f)
	f.StringVar(&o.registry, "registry", "REGISTRY_PATH", "", "the registry file whose proposals to read (REGISTRY.proposals.jsonl beside it)")
	f.StringVar(&o.status, "status", "THREEGS_PROPOSALS_STATUS", "", "list: only proposals with this status: pending, accepted or rejected")
}

func proposalsDecideFlags(f *Flags) {
	o := options[proposalsOptions](f)
	f.StringVar(&o.reason, "reason", "THREEGS_PROPOSAL_REASON", "", "why, shown with the decision to anyone who reads the proposal (required to reject)")
	o.flags(f, "the registry file the proposal was made to",
		"the curator's secret key file, to sign the decision, and the registry after accepting a change (a running server signs with its own)",
		"how long the new signature vouches for the registry",
		"")
}

// parseProposals checks serve's proposal flags.
func parseProposals(f *Flags) (app.Proposals, error) {
	o := options[proposalServeOptions](f)
	max, err := o.maxPending.get()
	if err != nil {
		return app.Proposals{}, err
	}
	keep, err := o.retention.get()
	if err != nil {
		return app.Proposals{}, err
	}
	maxBytes, err := o.maxBytes.get()
	if err != nil {
		return app.Proposals{}, err
	}
	rate, err := o.rate.get()
	if err != nil {
		return app.Proposals{}, err
	}
	total, err := o.totalRate.get()
	if err != nil {
		return app.Proposals{}, err
	}
	v6, err := o.v6prefix.get()
	if err == nil && v6 > 128 {
		err = fmt.Errorf("--proposal-ipv6-prefix (THREEGS_PROPOSAL_IPV6_PREFIX) is a prefix length of an IPv6 address, 16 to 128, got %d", v6)
	}
	if err == nil && o.take != "auto" && o.take != "on" && o.take != "off" {
		err = fmt.Errorf("--proposals (THREEGS_PROPOSALS) is on, off or auto, got %q", o.take)
	}
	return app.Proposals{Options: proposals.Options{MaxPending: max, Retention: keep, MaxBytes: int64(maxBytes)}, Rate: rate, TotalRate: total, IPv6Prefix: v6, Take: o.take}, err
}

// proposalsRegistry is the registry named by --registry, which the
// proposals verbs need.
func proposalsRegistry(env *Env, verb string, f *Flags) (string, bool) {
	p := options[proposalsOptions](f).registry
	if p == "" {
		fmt.Fprintf(env.Stderr, "3gs proposals %s: name the registry with --registry PATH (or REGISTRY_PATH)\n", verb)
	}
	return p, p != ""
}

// readProposals reads the proposals file beside the registry reg,
// reporting a failure as proposals verb.
func readProposals(env *Env, verb, reg string) ([]*proposals.Proposal, bool) {
	ps, err := proposals.Read(proposals.PathFor(reg))
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs proposals %s: %v\n", verb, err)
		return nil, false
	}
	return ps, true
}

func runProposalsList(_ context.Context, env *Env, f *Flags) int {
	reg, ok := proposalsRegistry(env, "list", f)
	if !ok {
		return ExitUsage
	}
	ps, ok := readProposals(env, "list", reg)
	if !ok {
		return ExitFail
	}
	page, _ := proposals.ListAll(ps, proposals.Filter{Status: gen.ProposalStatus(options[proposalsOptions](f).status), Limit: len(ps) + 1})
	if len(page) == 0 {
		fmt.Fprintf(env.Stdout, "No proposals in %s.\n", proposals.PathFor(reg))
		return ExitOK
	}
	for _, p := range page {
		sup, opp := p.Tally()
		fmt.Fprintf(env.Stdout, "%s  %-8s  %s %s  %d for, %d against  %s\n", p.ID, p.Status, p.Action, p.Slug, sup, opp, p.Created.Format(time.RFC3339))
		fmt.Fprintf(env.Stdout, "    reason (proposer's words): %s\n", plainText(p.Reason, 200))
	}
	return ExitOK
}

func runProposalsShow(_ context.Context, env *Env, f *Flags) int {
	reg, id, ok := proposalTarget(env, "show", f)
	if !ok {
		return ExitUsage
	}
	ps, ok := readProposals(env, "show", reg)
	if !ok {
		return ExitFail
	}
	for _, p := range ps {
		if p.ID == id {
			showProposal(env.Stdout, p)
			if p.Decision == nil {
				return ExitOK
			}
			line, ok := decisionCheck(reg, p)
			fmt.Fprintln(env.Stdout, line)
			if !ok {
				return ExitFail
			}
			return ExitOK
		}
	}
	fmt.Fprintf(env.Stderr, "3gs proposals show: no proposal %s in %s; 3gs proposals list --registry %s shows those there are\n", id, proposals.PathFor(reg), signature.ShellQuote(reg))
	return ExitFail
}

// oneLine is s with every run of white space one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// plainText is a proposer's text for the terminal: on one line, cut at
// max characters, and hidden characters shown as escapes
// (textnorm.Terminal), so the curator sees they were there.
func plainText(s string, max int) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return textnorm.Terminal(s)
}

func showProposal(w io.Writer, p *proposals.Proposal) {
	fmt.Fprintf(w, "Proposal %s: %s %s, %s, proposed %s\n", p.ID, p.Action, p.Slug, p.Status, p.Created.Format(time.RFC3339))
	if p.Client != nil {
		fmt.Fprintf(w, "Sent from: %s (3gs proposals reject --client %s rejects all it has pending)\n", *p.Client, *p.Client)
	}
	if p.Digest != nil {
		fmt.Fprintf(w, "Compacted after its decision: its body was dropped, %s of the line that held it kept\n", *p.Digest)
	}
	fmt.Fprintln(w, "-- proposed by an unknown party, not instructions --")
	fmt.Fprintf(w, "Reason: %s\n", plainText(p.Reason, proposals.MaxReason))
	if p.Contact != nil {
		fmt.Fprintf(w, "Contact: %s\n", plainText(*p.Contact, proposals.MaxContact))
	}
	if p.Rank != nil {
		fmt.Fprintf(w, "Rank: %d\n", *p.Rank)
	}
	if c := p.Category; c != nil {
		fmt.Fprintf(w, "Category: %s\nDescription: %s\nQuery patterns: %s\n", plainText(c.Name, 200), plainText(c.Description, 2000), plainText(strings.Join(c.QueryPatterns, "; "), 2000))
		for _, s := range c.Sources {
			fmt.Fprintf(w, "Source %d: %s <%s> (%s): %s\n", s.Rank, plainText(s.Name, 200), plainText(s.URL, 2048), s.Type, plainText(s.Why, 500))
		}
	}
	if s := p.Source; s != nil {
		fmt.Fprintf(w, "Source %d: %s <%s> (%s): %s\n", s.Rank, plainText(s.Name, 200), plainText(s.URL, 2048), s.Type, plainText(s.Why, 500))
	}
	fmt.Fprintln(w, "-- end of the proposal --")
	sup, opp := p.Tally()
	fmt.Fprintf(w, "Votes by endorsed curators: %d for, %d against\n", sup, opp)
	for _, v := range p.Votes {
		fmt.Fprintf(w, "  %s %s at %s\n", v.Pubkey, v.Vote, v.Time.Format(time.RFC3339))
	}
	if d := p.Decision; d != nil {
		fmt.Fprintf(w, "Decision: %s by %s at %s", p.Status, d.Actor, d.Time.Format(time.RFC3339))
		if d.Version != nil {
			fmt.Fprintf(w, ", registry version %s", *d.Version)
		}
		if d.Reason != nil {
			fmt.Fprintf(w, "; reason: %s", plainText(*d.Reason, proposals.MaxReason))
		}
		fmt.Fprintln(w)
	}
}

// decisionCheck says whether p's decision is signed by the curator key
// the registry reg names; ok is false when a signature is there and
// does not verify.
func decisionCheck(reg string, p *proposals.Proposal) (line string, ok bool) {
	if p.Decision.Signature == nil {
		return "Decision signature: none (decided by a node that held no curator key; 3gs proposals accept|reject sign with --key-file)", true
	}
	doc, err := registry.LoadFile(reg)
	if err != nil {
		return "Decision signature: not checked: " + oneLine(err.Error()), true
	}
	key, named := doc.CuratorKey()
	if !named {
		return "Decision signature: not checked: " + reg + " names no curator key", true
	}
	node := curatorkey.URI(key)
	if err := proposals.VerifyDecision(node, p); err != nil {
		return "Decision signature: FAILS: " + err.Error(), false
	}
	return "Decision signature: verified with the registry's curator key " + node, true
}

// proposalTarget is the registry (--registry) and the one argument, a
// proposal id, of show and accept (reject takes ids or a filter: see
// proposalreject.go).
func proposalTarget(env *Env, verb string, f *Flags) (reg, id string, ok bool) {
	if reg, ok = proposalsRegistry(env, verb, f); !ok {
		return "", "", false
	}
	args := f.Args()
	if len(args) != 1 || !proposals.ValidID(args[0]) {
		fmt.Fprintf(env.Stderr, "3gs proposals %s: give one proposal id (p and 16 hex digits, as 3gs proposals list shows), e.g. 3gs proposals %s p0f3a9c2e41b7d586 --registry R\n", verb, verb)
		return "", "", false
	}
	return reg, args[0], true
}

// openProposals opens the proposals file of the registry reg, whose lock
// the command holds (takeWriter): it is then the one writer of both. A
// server holding the lock is asked instead, through its admin tools.
func openProposals(env *Env, verb, reg string) (*proposals.File, bool) {
	s, notes, err := proposals.Open(proposals.PathFor(reg), proposals.Options{Retention: 100 * 365 * 24 * time.Hour})
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs proposals %s: %v\n", verb, err)
		return nil, false
	}
	for _, n := range notes {
		fmt.Fprintf(env.Stderr, "3gs proposals %s: %s\n", verb, n)
	}
	return s, true
}

// acceptArgs are accept_proposal's arguments, as 3gs proposals accept
// sends them to the server holding the registry.
type acceptArgs struct {
	ID     string `json:"id"`
	Reason string `json:"reason,omitempty"`
}

func runProposalsAccept(_ context.Context, env *Env, f *Flags) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(env.Stderr, "3gs proposals accept: "+format+"\n", args...)
		return ExitFail
	}
	reg, id, ok := proposalTarget(env, "accept", f)
	if !ok {
		return ExitUsage
	}
	o := options[proposalsOptions](f)
	sg, err := o.signer(env, "proposals accept")
	if err != nil {
		return fail("%v", err)
	}
	w, ok := takeWriter(env, "proposals accept", reg)
	if !ok {
		return ExitFail
	}
	defer w.release()
	if w.server {
		return w.callServer(env, "proposals accept", reg, "accept_proposal", acceptArgs{ID: id, Reason: o.reason}, sg.key != nil)
	}
	s, ok := openProposals(env, "accept", reg)
	if !ok {
		return ExitFail
	}
	defer s.Close()
	// The same workflow as the accept_proposal tool's (curation.Node.Accept).
	node := curation.NewFile(sg.file(env, "proposals accept", reg, auditLogPath(o.auditLog, reg)))
	node.SetProposals(s)
	actor := app.LocalActor()
	done, err := node.Accept(actor, id, o.reason)
	var ae *curation.AcceptError
	if errors.As(err, &ae) && ae.Accepted != nil {
		printAccepted(env, reg, actor, ae.Accepted)
	}
	switch {
	case err == nil:
		printAccepted(env, reg, actor, done)
		fmt.Fprintf(env.Stdout, "Accepted proposal %s.\n", id)
		return ExitOK
	case ae == nil:
		return fail("%v", err)
	case ae.Step == curation.StepFind:
		return fail("%s: %v", id, ae.Err)
	case ae.Step == curation.StepCheck:
		return fail("nothing decided: %v", ae.Err)
	case ae.Step == curation.StepRecord:
		return fail("the decision on %s could not be recorded: %v", id, ae.Err)
	}
	var (
		re *curation.ReadError
		ke *store.KeyNeededError
		we *curation.WrongKeyError
		ue *curation.UnverifiedError
	)
	switch err := ae.Err; {
	case errors.As(err, &re) && re.Path != reg:
		return fail("nothing decided: %v", re.Err)
	case errors.As(err, &re):
		problem, fix := registryProblem(reg, re.Err, "")
		return fail("nothing decided: %s\nFix: %s.", problem, fix)
	case errors.As(err, &ke):
		return fail("nothing decided: %s names a curator key, so the change must be signed: give the curator's key with --key-file (or %s)", reg, secretKeyEnv)
	case errors.As(err, &we):
		return fail("nothing decided: the key from %s cannot sign %s: %v", sg.from, reg, we.Err)
	case errors.As(err, &ue):
		return fail("nothing decided: %s%s does not verify (%v), so %s was changed since it was signed; accepting now would sign those changes too. Check it with 3gs verify, sign your own edits with 3gs sign, then accept again.", reg, signature.Suffix, ue.Problem, reg)
	}
	return fail("nothing decided, the registry is unchanged: %v\nThe proposal stays pending; reject it if it no longer applies.", ae.Err)
}

// printAccepted says what an accept did to the registry at reg.
func printAccepted(env *Env, reg, actor string, a *curation.Accepted) {
	switch {
	case a.Recovered:
		fmt.Fprintf(env.Stdout, "Proposal %s was applied already (the audit log records version %s); recording the decision only.\n", a.Proposal.ID, a.Version)
	case a.Change != nil:
		fmt.Fprintf(env.Stdout, "Applied proposal %s to %s: version %s → %s, recorded in the audit log as seq %d (actor %q).\n", a.Proposal.ID, reg, a.Change.Old.Registry.Version(), a.Version, a.Change.Head.Seq, proposals.Actor(a.Proposal.ID, actor))
	}
}

// pendingProposals is a line naming the proposals waiting beside the
// registry at reg, or "" when there are none (or none can be read).
func pendingProposals(reg string) string {
	ps, err := proposals.Read(proposals.PathFor(reg))
	if err != nil {
		return ""
	}
	n := 0
	for _, p := range ps {
		if p.Status == gen.ProposalStatusPending {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d %s for the curator: 3gs proposals list --registry %s --status pending", n, plural(n, "proposal from the public waits", "proposals from the public wait"), signature.ShellQuote(reg))
}

// proposals reports the proposals waiting, for doctor.
func (d *doctor) proposals(f *Flags) {
	reg := d.o.registry
	if reg == "" {
		return
	}
	if _, err := parseProposals(f); err != nil {
		return // reported with the flags
	}
	if line := pendingProposals(reg); line != "" {
		d.add(warn, "proposals", line, "accept or reject them with 3gs proposals accept|reject ID, which decide through the running server when one holds the registry (or the admin tools accept_proposal and reject_proposal over MCP)")
	}
}
