package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/registry"
)

// GetEndorsements implements gen.ToolHandlers.
func (h *Handlers) GetEndorsements(context.Context, *gen.GetEndorsementsInput) (*gen.GetEndorsementsOutput, error) {
	out := &gen.GetEndorsementsOutput{Endorsements: []gen.EndorsedPeer{}}
	states := map[string]peer.Peer{}
	if h.peers != nil {
		for _, p := range h.peers.Peers() {
			states[p.Endorsement.Pubkey] = p
		}
	}
	snap := h.cur.Load()
	if err := h.withheld(snap, out); err != nil {
		return nil, err
	}
	for _, e := range snap.reg.Endorsements() {
		ep := gen.EndorsedPeer{Pubkey: e.Pubkey, URL: e.URL, Name: e.Name, Since: e.Since, Status: gen.EndorsedPeerStatusPending}
		p, ok := states[e.Pubkey]
		switch {
		case h.peers == nil:
			ep.Reason = ptr(gen.EndorsedPeerReasonNotFetchedThisServerDoesNotFetchEndorsedRegistries)
		case !snap.signature.Verified:
			ep.Reason = ptr(gen.EndorsedPeerReasonNotFetchedOwnSignatureDoesNotVerify)
		case ok:
			ep.Status = gen.EndorsedPeerStatus(p.Status)
			// The coarse reason only: the full one may quote what the
			// peer sent, and goes to the log.
			if r := publicReason(p.Status, p.Public); r != "" {
				ep.Reason = ptr(gen.EndorsedPeerReason(r))
			}
			if c := p.Copy; c != nil {
				ep.LastSuccess = ptr(second(c.FetchedAt))
				ep.Version = ptr(c.Registry.Version())
				ep.Categories = ptr(len(c.Registry.Categories()))
				for _, theirs := range c.Registry.Endorsements() {
					ep.Endorses = append(ep.Endorses, theirs.Pubkey)
				}
				ep.VerifiedLinks = h.verifiedLinks(e.Pubkey, c.Registry.Curator().Links)
			}
		}
		out.Endorsements = append(out.Endorsements, ep)
	}
	return out, nil
}

// publicReason is what anyone may be told of why a peer (or an origin)
// with status is not fresh: public, its coarse reason, when it is one of
// peer.PublicReasons, else the status alone. Nothing the peer sent is
// ever in it.
func publicReason[S ~string](status S, public string) string {
	if slices.Contains(peer.PublicReasons, public) {
		return public
	}
	switch string(status) {
	case string(peer.Refused):
		return peer.RefusedPlain
	case string(peer.Unreachable):
		return string(peer.Unreachable)
	}
	return ""
}

// PublicReason is publicReason for a follower's state, for /health.
func PublicReason(status, public string) string { return publicReason(status, public) }

// GetEndorsementsText implements gen.ToolHandlers.
func (h *Handlers) GetEndorsementsText(out *gen.GetEndorsementsOutput) string {
	if len(out.Endorsements) == 0 {
		return "This curator endorses no other curator yet. An endorsement names another curator's key and where their registry is; 3gs then fetches it, verifies it against that key, and answers get_federated_sources from it too."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Endorsed curators (%d):\n", len(out.Endorsements))
	for _, e := range out.Endorsements {
		name := "(unnamed)"
		if e.Name != nil {
			name = oneLine(*e.Name, 200)
		}
		fmt.Fprintf(&b, "- %s: %s, since %s, at %s: %s", name, e.Pubkey, e.Since, e.URL, e.Status)
		if e.Version != nil {
			fmt.Fprintf(&b, ", version %s (%d categories), verified %s", oneLine(*e.Version, 64), deref(e.Categories), timeText(e.LastSuccess))
		}
		if e.Reason != nil && string(*e.Reason) != string(e.Status) {
			fmt.Fprintf(&b, "; %s", *e.Reason)
		}
		b.WriteString(linksClaimed(e.VerifiedLinks))
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// oneLine is s as one line of at most max runes: control characters
// (newlines among them) become spaces, and format characters (Unicode Cf:
// text-direction controls, zero-width and tag characters) are dropped.
// Text from another curator's registry is shown this way, so that it can
// never start a line of its own and pass for a heading or a trust label
// in a tool's text, nor carry what a reader cannot see; the loader refuses
// such characters already (registry.Hidden), and this is the second line.
func oneLine(s string, max int) string {
	var b strings.Builder
	writeOneLine(&b, s, max)
	return b.String()
}

// writeOneLine writes oneLine(s, max) to b, making no string of it.
func writeOneLine(b *strings.Builder, s string, max int) {
	n := 0
	for _, r := range s {
		if n == max {
			b.WriteString("…")
			break
		}
		if registry.Hidden(r) {
			if r >= 0xa0 && r != '\u2028' && r != '\u2029' {
				continue // a format character: nothing to show
			}
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
}
