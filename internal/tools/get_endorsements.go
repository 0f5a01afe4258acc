package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/three-good-sources/3gs/gen"
)

// GetEndorsements implements gen.ToolHandlers.
func (h *Handlers) GetEndorsements(context.Context, *gen.GetEndorsementsInput) (*gen.GetEndorsementsOutput, error) {
	out := &gen.GetEndorsementsOutput{Endorsements: []gen.Endorsement{}}
	for _, e := range h.cur.Load().reg.Endorsements() {
		out.Endorsements = append(out.Endorsements, gen.Endorsement{Pubkey: e.Pubkey, URL: e.URL, Name: e.Name, Since: e.Since})
	}
	return out, nil
}

// GetEndorsementsText implements gen.ToolHandlers.
func (h *Handlers) GetEndorsementsText(out *gen.GetEndorsementsOutput) string {
	if len(out.Endorsements) == 0 {
		return "No endorsements yet. An endorsement is another curator's public statement, published at a URL under their own public key, that they vouch for this registry. Endorsements appear here once the curator lists them in the registry."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Endorsements (%d):\n", len(out.Endorsements))
	for _, e := range out.Endorsements {
		name := "(unnamed)"
		if e.Name != nil {
			name = *e.Name
		}
		fmt.Fprintf(&b, "- %s: %s, since %s, published at %s\n", name, e.Pubkey, e.Since, e.URL)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
