package proposals

import (
	"fmt"
	"net/url"
	"slices"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/registry"
)

// Changes reports whether accepting p changes the registry: every action
// but a report of a dead source, which the curator acts on by hand.
func (p *Proposal) Changes() bool { return p.Action != gen.ProposalActionReportDeadSource }

// SourceRank is the rank of the source p is about (replace_source,
// report_dead_source); 0 when it names none.
func (p *Proposal) SourceRank() int {
	if p.Rank == nil {
		return 0
	}
	return *p.Rank
}

// Apply makes the change p proposes to doc (a registry document the
// caller owns, as registry.Document returns), without checking the
// result: the registry's loader does that. It fails when the change no
// longer fits the registry (the category was added or removed since).
func Apply(p *Proposal, doc *gen.Registry) error {
	cat, exists := doc.Categories[p.Slug]
	switch p.Action {
	case gen.ProposalActionAddCategory:
		if exists {
			return fmt.Errorf("the registry has a category %s already; propose update_category to change it", p.Slug)
		}
		doc.Categories[p.Slug] = *p.Category
	case gen.ProposalActionUpdateCategory:
		if !exists {
			return fmt.Errorf("the registry has no category %s; propose add_category to add it", p.Slug)
		}
		doc.Categories[p.Slug] = *p.Category
	case gen.ProposalActionRemoveCategory:
		if !exists {
			return fmt.Errorf("the registry has no category %s", p.Slug)
		}
		delete(doc.Categories, p.Slug)
	case gen.ProposalActionReplaceSource, gen.ProposalActionReportDeadSource:
		if !exists {
			return fmt.Errorf("the registry has no category %s", p.Slug)
		}
		i := slices.IndexFunc(cat.Sources, func(s gen.Source) bool { return s.Rank == p.SourceRank() })
		if i < 0 {
			return fmt.Errorf("category %s has no source ranked %d", p.Slug, p.SourceRank())
		}
		if p.Action == gen.ProposalActionReplaceSource {
			// The category is shared with the registry served: replace
			// its sources, never write into them.
			cat.Sources = slices.Clone(cat.Sources)
			cat.Sources[i] = *p.Source
			doc.Categories[p.Slug] = cat
		}
	default:
		return fmt.Errorf("unknown action %q", p.Action)
	}
	return nil
}

// Shape checks that p carries what its action needs and nothing else,
// and that its own text holds no control or format characters; it
// returns the path and reason of the first problem.
func Shape(p *Proposal) (path, reason string) {
	needs := map[gen.ProposalAction][3]bool{ // category, rank, source
		gen.ProposalActionAddCategory: {true, false, false}, gen.ProposalActionUpdateCategory: {true, false, false}, gen.ProposalActionRemoveCategory: {},
		gen.ProposalActionReplaceSource: {false, true, true}, gen.ProposalActionReportDeadSource: {false, true, false},
	}
	want, ok := needs[p.Action]
	if !ok {
		return "action", "unknown action"
	}
	has := [3]bool{p.Category != nil, p.Rank != nil, p.Source != nil}
	names := [3]string{"category", "rank", "source"}
	for i := range has {
		switch {
		case want[i] && !has[i]:
			return names[i], "required by action " + string(p.Action)
		case !want[i] && has[i]:
			return names[i], "not taken by action " + string(p.Action) + "; leave it out"
		}
	}
	if p.Source != nil && p.Source.Rank != p.SourceRank() {
		return "source.rank", fmt.Sprintf("must equal rank (%d)", p.SourceRank())
	}
	contact := ""
	if p.Contact != nil {
		contact = *p.Contact
	}
	for _, f := range []struct{ path, text string }{{"reason", p.Reason}, {"contact", contact}} {
		for _, r := range f.text {
			if registry.Hidden(r) {
				return f.path, fmt.Sprintf("holds the character %U, a control or invisible format character; write plain text", r)
			}
		}
	}
	return "", ""
}

// AuditAction is the audit log action that records accepting p: upsert
// for a category added or changed, remove for one removed.
func (p *Proposal) AuditAction() gen.AuditAction {
	if p.Action == gen.ProposalActionRemoveCategory {
		return gen.AuditActionRemove
	}
	return gen.AuditActionUpsert
}

// actorPrefix begins the audit log actor of a change accepted from
// proposal id (AppliedIn looks for it).
func actorPrefix(id string) string { return "proposal " + id + " accepted by " }

// Actor is the audit log actor of a change accepted from proposal id by
// who (an admin token's name, or cli): it names the proposal, within the
// 64 characters an actor may take.
func Actor(id, who string) string {
	if who == "" {
		who = "cli"
	}
	a := actorPrefix(id) + who
	if len(a) > 64 {
		a = a[:64]
	}
	return a
}

// ApplyAccepted is Apply for a proposal the curator accepts: first it
// checks again that every URL the proposal names is on a public host
// (fetch.CheckHost), as propose_change did when it was made. A proposal
// recorded by an older 3gs, whose check knew fewer spellings of a private
// address, could name one, and once accepted the origin's own checks
// would fetch it with the operator's trust.
func ApplyAccepted(p *Proposal, doc *gen.Registry) error {
	var urls []string
	if p.Source != nil {
		urls = append(urls, p.Source.URL)
	}
	if p.Category != nil {
		for _, s := range p.Category.Sources {
			urls = append(urls, s.URL)
		}
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			return fmt.Errorf("the proposal's source URL %q does not parse: %v; reject it", raw, err)
		}
		if _, err := fetch.CheckHost(u.Hostname()); err != nil {
			return fmt.Errorf("the proposal names %s: %v; a proposal may not name such a host (reject it, and add the source by hand if you mean it)", u.Redacted(), err)
		}
	}
	return Apply(p, doc)
}
