package tools

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/registry"
)

// GetFederatedSources implements gen.ToolHandlers. It asks our own
// registry and every endorsed curator's verified copy, each through the
// matcher built for it when it was accepted; a peer that is down or was
// refused answers from its last verified copy, or not at all, and never
// makes the call fail.
func (h *Handlers) GetFederatedSources(_ context.Context, in *gen.GetFederatedSourcesInput) (*gen.GetFederatedSourcesOutput, error) {
	threshold := h.threshold
	if in.Threshold != nil {
		threshold = *in.Threshold
	}
	out := &gen.GetFederatedSourcesOutput{Query: in.Query, Threshold: threshold, Results: []gen.FederatedResult{}, Peers: []gen.PeerState{}}
	s := h.cur.Load()
	own, err := s.matcher.Match(in.Query, 1)
	if text, ok := queryProblem(in.Query, err); ok {
		return nil, &gen.ToolError{Text: text, Structured: out}
	} else if err != nil {
		return nil, err
	}
	if len(own) > 0 && own[0].Score >= threshold {
		out.Results = append(out.Results, federated(s.reg, own[0], gen.FederatedResultTrustOwn))
	}
	if h.peers == nil {
		return out, nil
	}
	stale := h.peers.Config().StaleAfter
	now := h.now()
	var theirs []gen.FederatedResult
	for _, p := range peer.Sorted(h.peers.Peers()) {
		ps := gen.PeerState{Pubkey: p.Endorsement.Pubkey, Status: gen.PeerStateStatus(p.Status), Answered: ptr(false)}
		if p.Endorsement.Name != nil {
			ps.Name = ptr(oneLine(*p.Endorsement.Name, 200))
		}
		if p.Copy != nil && p.Matcher != nil {
			// The query was checked above; a peer's matcher refuses the
			// same queries ours does, so an error only means no answer.
			top, err := p.Matcher.Match(in.Query, 1)
			ps.Answered = ptr(err == nil)
			if err == nil && len(top) > 0 && top[0].Score >= threshold {
				r := federated(p.Copy.Registry, top[0], gen.FederatedResultTrustEndorsed)
				r.FetchedAt = ptr(p.Copy.FetchedAt.UTC().Format(time.RFC3339))
				r.Stale = p.Stale(now, stale)
				theirs = append(theirs, r)
			}
		}
		out.Peers = append(out.Peers, ps)
	}
	// Peers by score, best first; ties by key, so the order never depends
	// on which peer answered its last fetch first.
	slices.SortStableFunc(theirs, func(a, b gen.FederatedResult) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.Curator.Pubkey, b.Curator.Pubkey)
	})
	out.Results = append(out.Results, theirs...)
	return out, nil
}

// federated is one registry's answer.
func federated(reg *registry.Registry, best matcher.Scored, trust gen.FederatedResultTrust) gen.FederatedResult {
	c, _ := reg.Category(best.Slug)
	r := gen.FederatedResult{
		Trust: trust, Curator: reg.Curator(), RegistryVersion: reg.Version(),
		Slug: c.Slug, Name: c.Name, Description: c.Description, Score: best.Score,
	}
	r.Sources = append(r.Sources, c.Sources...)
	return r
}

// GetFederatedSourcesText implements gen.ToolHandlers. Every string a
// peer wrote is shown on one line (oneLine), so that no peer can forge a
// heading or a trust label for another answer.
func (h *Handlers) GetFederatedSourcesText(out *gen.GetFederatedSourcesOutput) string {
	var b strings.Builder
	if len(out.Results) == 0 {
		b.WriteString("No registry has a category for '" + oneLine(out.Query, 500) + "' at or above the threshold " + fmtScore(out.Threshold) + ". Try get_sources for candidates to choose from, or rephrase.")
	}
	for i, r := range out.Results {
		if i > 0 {
			b.WriteString("\n\n")
		}
		trust := "own curator"
		if r.Trust == gen.FederatedResultTrustEndorsed {
			trust = "endorsed curator"
			if r.Stale {
				trust += ", stale copy"
			}
		}
		b.WriteString("== " + strconv.Itoa(i+1) + ". " + oneLine(r.Curator.Name, 200) + " (" + r.Curator.Pubkey + "), " + trust + " ==\n")
		b.WriteString("Category: " + oneLine(r.Name, 200) + "\n")
		b.WriteString("Slug: " + r.Slug + "\n")
		b.WriteString("Description: " + oneLine(r.Description, 2000) + "\n")
		b.WriteString("Match Score: " + fmtScore(r.Score) + "\n")
		b.WriteString("Registry Version: " + oneLine(r.RegistryVersion, 64) + "\n")
		b.WriteString("Sources:")
		for _, s := range r.Sources {
			b.WriteString("\n" + strconv.Itoa(s.Rank) + ". " + oneLine(s.Name, 200))
			b.WriteString("\n   URL: " + oneLine(s.URL, 2048))
			b.WriteString("\n   Type: " + string(s.Type))
			b.WriteString("\n   Why: " + oneLine(s.Why, 500))
		}
	}
	var down []string
	for _, p := range out.Peers {
		if !deref(p.Answered) {
			down = append(down, p.Pubkey+" ("+string(p.Status)+")")
		}
	}
	if len(down) > 0 {
		b.WriteString("\n\nNot asked (no verified copy): " + strings.Join(down, ", "))
	}
	return b.String()
}
