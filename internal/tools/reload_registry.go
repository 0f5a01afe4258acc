package tools

import (
	"context"
	"errors"
	"fmt"
	"github.com/three-good-sources/3gs/internal/signature"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/store"
)

// ReloadRegistry implements gen.ToolHandlers. A caller with a token
// cannot make this server sign what the file holds: only a registry the
// curator signed loads (see SignHandEdit for the curator's own edit).
func (h *Handlers) ReloadRegistry(ctx context.Context, _ *gen.ReloadRegistryInput) (*gen.ReloadRegistryOutput, error) {
	return h.reload(ctx, false)
}

// SignHandEdit is 3gs sign for a registry this server edits: the curator
// edited the file by hand, and sign, which cannot write while this server
// holds the lock, asks the server over its local channel (internal/cli's
// sign socket, which only the server's own user can reach) to do what it
// would: record the edit in the audit log, sign it with the curator key,
// with the next patch version when the version was left as served, and
// serve it.
func (h *Handlers) SignHandEdit(ctx context.Context) (*gen.ReloadRegistryOutput, error) {
	return h.reload(ctx, true)
}

// reload serves the registry file as it is now (curation.Node.Reload);
// with signEdit, an edit of a file that names this server's curator key
// is signed by the server.
func (h *Handlers) reload(ctx context.Context, signEdit bool) (*gen.ReloadRegistryOutput, error) {
	state := func(s store.Served, reloaded bool) *gen.ReloadRegistryOutput {
		return &gen.ReloadRegistryOutput{Reloaded: reloaded, RegistryVersion: s.Registry.Version(), RegistrySHA256: s.Registry.SHA256(), CategoryCount: len(s.Registry.Categories()), Verified: s.Signature.Verified}
	}
	if h.node == nil {
		return nil, editFailure(h.noFile(), state(h.cur.Load().served(), false))
	}
	next, err := h.node.Reload(auth.CallerFrom(ctx).Name, signEdit)
	var re *curation.ReloadError
	switch {
	case errors.As(err, &re):
		out := state(next, false)
		out.Errors = []gen.Problem{}
		for _, p := range re.Problems {
			out.Errors = append(out.Errors, gen.Problem{Path: p.Path, Reason: p.Reason})
		}
		return nil, &gen.ToolError{Text: re.Text + reloadFix(re) + " The registry served is unchanged (version " + re.Version + ").", Structured: out}
	case err != nil:
		return nil, err
	}
	return state(next, true), nil
}

// ReloadRegistryText implements gen.ToolHandlers.
func (h *Handlers) ReloadRegistryText(out *gen.ReloadRegistryOutput) string {
	verified := "not verified by a curator signature"
	if out.Verified {
		verified = "verified by its curator's signature"
	}
	return fmt.Sprintf("Reloaded: now serving registry version %s, %s, SHA-256 %s, %s.", out.RegistryVersion, categories(out.CategoryCount), out.RegistrySHA256, verified)
}

// reloadFix words the remedy of a refused reload for the admin calling
// reload_registry, with the commands and serve's settings that apply.
func reloadFix(re *curation.ReloadError) string {
	switch re.Fix {
	case curation.FixSignOrAllowExpired:
		return " The curator signs it again with 3gs sign; a server started with --allow-expired (THREEGS_ALLOW_EXPIRED) loads it anyway."
	case curation.FixSignWhileStopped:
		return " Stop the server, run 3gs sign --key-file KEY " + signature.ShellQuote(re.Path) + ", and start it again."
	case curation.FixRestartWithKey:
		return " A new curator key takes a restart with --pubkey (THREEGS_PUBKEY) set to it."
	}
	return ""
}
