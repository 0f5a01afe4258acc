package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/linkcheck"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
)

// runCheckReport prints the curator's to-do list from the health file:
// what the last check found that needs a hand, most urgent first. Exit 0
// when nothing does, 1 otherwise (or when there is no check to read).
func runCheckReport(env *Env, o *checkOptions, path string, limit int64) int {
	healthPath := o.healthFile
	if healthPath == "" && path != "" {
		healthPath = sourcehealth.PathFor(path)
	}
	if healthPath == "" {
		fmt.Fprintln(env.Stderr, "3gs check: --report reads the health file of a registry file: name it, e.g. 3gs check --report registry.json (or --health-file FILE)")
		return ExitUsage
	}
	reg, source, ok := loadRegistry(env, "check", path, limit)
	if !ok {
		return ExitFail
	}
	doc, err := sourcehealth.Read(healthPath)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs check: %v\n", err)
		return ExitFail
	}
	q := signature.ShellQuote
	if doc == nil {
		fmt.Fprintf(env.Stderr, "3gs check: no check of %s is recorded in %s yet. Run 3gs check %s first.\n", source, healthPath, q(path))
		return ExitFail
	}
	refusedMoves(doc)
	when := sourcehealth.Ago(doc.CheckedAt, time.Now())
	fmt.Fprintf(env.Stdout, "To do for %s, from the check of version %s (%s): %s\n", source, doc.RegistryVersion, when, sourcehealth.SummaryLine(doc.Summary))
	if doc.RegistryVersion != reg.Version() {
		fmt.Fprintf(env.Stdout, "The registry is version %s now; run 3gs check %s for a fresh list.\n", reg.Version(), q(path))
	}
	n := 0
	section := func(st gen.CheckStatus, title, how string) {
		var rows []gen.CheckedSource
		for _, c := range doc.Sources {
			if c.Status == st && sourcehealth.StillListed(reg, c) {
				rows = append(rows, c)
			}
		}
		if len(rows) == 0 {
			return
		}
		n++
		fmt.Fprintf(env.Stdout, "\n%d. %s (%d): %s\n", n, title, len(rows), how)
		printRows(env.Stdout, rows)
	}
	section(gen.CheckStatusGone, "Replace the gone sources", "find another good source for each, and change it in the registry")
	section(gen.CheckStatusRedirected, "Apply the permanent redirects", "3gs check --apply-redirects --key-file KEY "+q(path))
	section(gen.CheckStatusError, "Look again at the failing sources", "a failure may pass; one that stays needs a replacement")
	section(gen.CheckStatusChanged, "Look at the changed pages", "a title or size that moved far may be a parked or replaced page")
	if path != "" {
		n += reportedDead(env.Stdout, path, n)
	}
	if n == 0 {
		fmt.Fprintln(env.Stdout, "\nNothing to do for the sources.")
	}
	fmt.Fprintln(env.Stdout, "\nQueries agents asked that the registry did not answer: 3gs misses QUERY_LOG (the file serve --query-log writes).")
	if n > 0 {
		return ExitFail
	}
	return ExitOK
}

// refusedMoves makes each redirect in doc to a URL no check would fetch
// (a health file written by an older 3gs may hold one: file:///etc/passwd,
// a link-local address) the error it is, without the URL, so the to-do
// list never advises it as the edit to make.
func refusedMoves(doc *gen.Sourcehealth) {
	for i := range doc.Sources {
		c := &doc.Sources[i]
		if c.Status == gen.CheckStatusRedirected && (c.Location == nil || !advisable(c.URL, *c.Location)) {
			reason := linkcheck.RedirectRefused
			c.Status, c.Reason, c.Location = gen.CheckStatusError, &reason, nil
		}
	}
	sourcehealth.Count(doc)
}

func printRows(w io.Writer, rows []gen.CheckedSource) {
	for _, c := range rows {
		fmt.Fprintf(w, "   %s #%d  %s\n", c.Category, c.Rank, checkedURL(c))
	}
}

// reportedDead prints, as section n+1, the pending proposals that report
// a source dead or propose a replacement for one (propose_change), and
// returns 1 when there are some, 0 otherwise.
func reportedDead(w io.Writer, path string, n int) int {
	ps, err := proposals.Read(proposals.PathFor(path))
	if err != nil {
		return 0
	}
	var rows []*proposals.Proposal
	for _, p := range ps {
		if p.Status == gen.ProposalStatusPending && (p.Action == gen.ProposalActionReportDeadSource || p.Action == gen.ProposalActionReplaceSource) {
			rows = append(rows, p)
		}
	}
	if len(rows) == 0 {
		return 0
	}
	fmt.Fprintf(w, "\n%d. Decide the proposals about sources (%d): 3gs proposals show ID --registry %s, then accept or reject\n", n+1, len(rows), signature.ShellQuote(path))
	for _, p := range rows {
		fmt.Fprintf(w, "   %s  %s #%d  %s (proposer's words: %s)\n", p.ID, p.Slug, p.SourceRank(), p.Action, plainText(p.Reason, 120))
	}
	return 1
}
