package curation

import (
	"fmt"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// Accepted is what Accept did.
type Accepted struct {
	Proposal *proposals.Proposal
	// Changed: the registry holds the proposal's change, made now
	// (Change) or before a crash (Recovered). A report of a dead source
	// changes nothing.
	Changed   bool
	Recovered bool
	// Version is the registry version that holds the change.
	Version string
	// Change is the change made now; nil when none was.
	Change *Changed
	// Signed: the registry served holds a verified signature.
	Signed bool
}

// AcceptStep is where an accept failed.
type AcceptStep int

const (
	// StepFind: the proposal is not there, or was decided (Err wraps
	// proposals.ErrNotFound, proposals.ErrDecided) or the store failed.
	StepFind AcceptStep = iota
	// StepCheck: the audit log could not say whether the change was made
	// already.
	StepCheck
	// StepApply: the change was not made; the proposal stays pending.
	// Err is a strictjson.Errors when the proposal no longer applies to
	// the registry, which changed since it was made.
	StepApply
	// StepRecord: the decision could not be recorded; Accepted says what
	// was done before (a change made now stays made: accepting again
	// finds it in the audit log and records only the decision).
	StepRecord
)

// AcceptError is an accept that failed at Step.
type AcceptError struct {
	Step     AcceptStep
	Err      error
	Accepted *Accepted
}

func (e *AcceptError) Error() string { return e.Err.Error() }
func (e *AcceptError) Unwrap() error { return e.Err }

// Accept accepts the pending proposal id as who (an admin token's name,
// or store.Actor), with reason: it makes the proposal's change
// (proposals.ApplyAccepted, which checks its hosts again), recorded in
// the audit log as the proposal's actor, then records the decision. A
// change the audit log shows made already (a crash, or a failed write of
// the proposals file, between the change and the decision) is not made
// again: only the decision is recorded. The server's accept_proposal and
// 3gs proposals accept both call it.
func (n *Node) Accept(who, id, reason string) (*Accepted, error) {
	if n.props == nil {
		return nil, ErrNoProposals
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	p, err := n.props.Get(id)
	if err == nil && p.Status != gen.ProposalStatusPending {
		err = proposals.ErrDecided
	}
	if err != nil {
		return nil, &AcceptError{Step: StepFind, Err: err}
	}
	out := &Accepted{Proposal: p}
	dec := proposals.Decision{Actor: who, Reason: proposals.Optional(reason)}
	if p.Changes() {
		version, done, err := proposals.AppliedIn(n.LogPath(), p.ID)
		if err != nil {
			return nil, &AcceptError{Step: StepCheck, Err: err}
		}
		if done {
			out.Changed, out.Recovered, out.Version = true, true, version
			if n.editor != nil {
				out.Signed = n.serving.Current().Signature.Verified
			}
		} else {
			changed, err := n.change(proposals.Actor(p.ID, who), p.AuditAction(), p.Slug, fileOptions{detail: AcceptDetail(p.ID, reason), needKey: true}, func(doc *gen.Registry) error {
				return proposals.ApplyAccepted(p, doc)
			})
			if err != nil {
				return nil, &AcceptError{Step: StepApply, Err: err}
			}
			out.Changed, out.Change, out.Version, out.Signed = true, changed, changed.New.Registry.Version(), changed.New.Signature.Verified
		}
		dec.Version = proposals.Optional(out.Version)
	} else if err := n.checkDecisionKey(); err != nil {
		return nil, &AcceptError{Step: StepRecord, Err: err}
	}
	if _, err := n.props.Decide(p.ID, gen.ProposalStatusAccepted, dec); err != nil {
		return nil, &AcceptError{Step: StepRecord, Err: err, Accepted: out}
	}
	return out, nil
}

// AcceptDetail is what the audit log entry of proposal id's change says
// it was: "accept proposal ID", and ": reason" when the curator gave one.
func AcceptDetail(id, reason string) string {
	if reason = strings.Join(strings.Fields(reason), " "); reason != "" {
		return "accept proposal " + id + ": " + reason
	}
	return "accept proposal " + id
}

// Reject rejects the pending proposals sel chooses, as who, with reason,
// and returns their ids (none when none matched): the registry does not
// change.
func (n *Node) Reject(who string, sel proposals.Selection, reason string) ([]string, error) {
	if n.props == nil {
		return nil, ErrNoProposals
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.checkDecisionKey(); err != nil {
		return nil, err
	}
	return n.props.Reject(sel, proposals.Decision{Actor: who, Reason: proposals.Optional(reason)})
}

// checkDecisionKey checks, on a command's node, that the key that will
// sign a decision is the registry's curator's, whose signature the
// registry's readers can check (a server's key was checked when it
// started, and a change checks it as it reads the file).
func (n *Node) checkDecisionKey() error {
	if n.file == nil || n.file.Key == nil {
		return nil
	}
	_, err := n.read(false)
	return err
}

// CheckProposal checks that p's change would apply to reg now and leave a
// registry of at most limit bytes that its rules accept, without making
// the whole registry again: the category it adds or changes is checked
// on its own by the registry's rules (registry.CheckCategory), which are
// each category's own. Its problems come back as strictjson.Errors under
// the proposal's own fields: "slug", "category...", "source...". A host
// the registry would only warn about (private, local, punycode) is a
// problem here: an unknown party may not propose one.
func CheckProposal(reg *registry.Registry, p *proposals.Proposal, limit int64) error {
	doc := gen.Registry{Categories: map[string]gen.Category{}}
	var before gen.Category
	if c, ok := reg.Category(p.Slug); ok {
		before = *c.Category
		doc.Categories[p.Slug] = before
	}
	if err := proposals.Apply(p, &doc); err != nil {
		return strictjson.Errors{{Path: "slug", Reason: err.Error()}}
	}
	after, kept := doc.Categories[p.Slug]
	switch {
	case !kept && len(reg.Categories()) == 1:
		return strictjson.Errors{{Path: "slug", Reason: "this is the registry's only category, and a registry keeps at least one"}}
	case !p.Changes() || !kept:
		return nil
	}
	errs, warnings := registry.CheckCategory("category", p.Slug, after)
	if len(errs) == 0 {
		// The size only: the one category before and after, written as
		// the registry writes it, differ by what the file would.
		grow := int64(len(oneCategory(p.Slug, after))) - int64(len(oneCategory(p.Slug, before)))
		if size := int64(reg.Size()) + grow; size > limit {
			errs = strictjson.Errors{{Reason: fmt.Sprintf("with this change the registry would be about %d bytes, more than the %d-byte limit of this server", size, limit)}}
		}
	}
	prefix := "category."
	if p.Source != nil {
		prefix = fmt.Sprintf("category.sources[%d].", p.SourceRank()-1)
	}
	for _, w := range warnings {
		if strings.HasPrefix(w.Path+".", prefix) {
			errs = append(errs, &strictjson.Error{Path: w.Path, Reason: w.Reason + "; a proposal may not name such a host (the curator can add it by hand)"})
		}
	}
	if len(errs) == 0 {
		return nil
	}
	if p.Source != nil {
		// The proposed source stands at sources[rank-1] of the category:
		// its problems are the source argument's.
		at := fmt.Sprintf("category.sources[%d]", p.SourceRank()-1)
		for _, e := range errs {
			if rest, ok := strings.CutPrefix(e.Path, at); ok {
				e.Path = "source" + rest
			}
		}
	}
	return errs
}

// oneCategory is a registry document holding only the category slug, c,
// as the registry's encoder writes it; the empty document when c is zero.
func oneCategory(slug string, c gen.Category) []byte {
	doc := gen.Registry{Categories: map[string]gen.Category{}}
	if c.Name != "" || len(c.Sources) > 0 {
		doc.Categories[slug] = c
	}
	return gen.EncodeRegistry(&doc)
}
