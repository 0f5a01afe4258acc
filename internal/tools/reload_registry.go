package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// ReloadRegistry implements gen.ToolHandlers.
func (h *Handlers) ReloadRegistry(ctx context.Context, _ *gen.ReloadRegistryInput) (*gen.ReloadRegistryOutput, error) {
	state := func(s *snapshot, reloaded bool) *gen.ReloadRegistryOutput {
		return &gen.ReloadRegistryOutput{Reloaded: reloaded, RegistryVersion: s.reg.Version(), RegistrySHA256: s.reg.SHA256(), CategoryCount: len(s.reg.Categories()), Verified: s.signature.Verified}
	}
	if h.edit == nil {
		return nil, editFailure(errNoFile, state(h.cur.Load(), false))
	}
	e := h.edit
	e.mu.Lock()
	defer e.mu.Unlock()
	old := h.cur.Load()
	refuse := func(text string, problems strictjson.Errors) error {
		out := state(old, false)
		out.Errors = []gen.Problem{}
		for _, p := range problems {
			out.Errors = append(out.Errors, gen.Problem{Path: p.Path, Reason: p.Reason})
		}
		return &gen.ToolError{Text: text + " The registry served is unchanged (version " + old.reg.Version() + ").", Structured: out}
	}
	data, doc, err := signature.ReadSigned(e.Path, registry.MaxSize)
	if err != nil {
		return nil, refuse("Cannot read "+e.Path+": "+err.Error()+".", strictjson.Errors{{Reason: err.Error()}})
	}
	reg, err := registry.Load(data)
	if err != nil {
		var errs strictjson.Errors
		if !errors.As(err, &errs) {
			errs = strictjson.Errors{{Reason: err.Error()}}
		}
		var lines []string
		for _, p := range errs {
			lines = append(lines, "- "+p.Error())
		}
		return nil, refuse(fmt.Sprintf("%s is not a valid registry (%d problems):\n%s\n", e.Path, len(errs), strings.Join(lines, "\n")), errs)
	}
	st := signature.Check(reg, doc)
	if msg, path := e.checkAnchor(old, reg, st); msg != "" {
		return nil, refuse(msg+" The registry served before stays.", strictjson.Errors{{Path: path, Reason: msg}})
	}
	if err := st.Refuse(reg); err != nil && !e.AllowUnsigned {
		msg := "The signature of " + e.Path + " does not verify: " + err.Error() + "."
		if errors.Is(err, signature.ErrMissing) {
			msg = e.Path + " names the curator key " + reg.Curator().Pubkey + " but has no signature file " + e.Path + signature.Suffix + "; the curator signs it with 3gs sign."
		}
		return nil, refuse(msg+" The registry served before stays.", strictjson.Errors{{Path: "", Reason: "signature: " + err.Error()}})
	}
	if e.Key != nil {
		if err := signature.CheckCurator(reg, pkarr.Public(e.Key)); err != nil {
			return nil, refuse("The file names another curator than the key this server holds: "+err.Error()+".", strictjson.Errors{{Path: "curator.pubkey", Reason: err.Error()}})
		}
	}
	if err := e.audit(e.Now(), auth.CallerFrom(ctx).Name, gen.ToolReloadRegistry, "", old.reg, reg); err != nil {
		return nil, refuse("Cannot record the reload in the audit log: "+err.Error()+".", strictjson.Errors{{Reason: err.Error()}})
	}
	modified := e.Now()
	if fi, err := os.Stat(e.Path); err == nil {
		modified = fi.ModTime()
	}
	next := newSnapshot(reg, e.NewMatcher(reg), st, old.files, modified)
	h.publish(next)
	if e.Anchor == nil && st.Verified {
		e.Anchor, e.AnchorFrom = st.Signer, "the first verified registry this server loaded"
	}
	return state(next, true), nil
}

// checkAnchor says why reg may not replace the served registry old, and
// the path of the problem, or "" when it may. A file anyone can write must
// not be able to change who the curator is, bring back an older version,
// or shed its signature, whatever --allow-unsigned says:
//   - once a curator key is trusted, only a registry verified under that
//     key loads (another key, or no valid signature, is refused);
//   - a version lower than the one served is a rollback.
func (e *editor) checkAnchor(old *snapshot, reg *registry.Registry, st signature.Status) (msg, path string) {
	if e.Anchor != nil {
		trusted := pkarr.URI(e.Anchor) + " (" + e.AnchorFrom + ")"
		switch {
		case !st.Verified && !st.Signed():
			return "Refusing a downgrade to an unsigned registry: " + e.Path + " has no valid signature file, and this server trusts only registries signed by " + trusted + ".", "signature"
		case !st.Verified:
			return "Refusing " + e.Path + ": its signature does not verify (" + st.Problem.Error() + "), and this server trusts only registries signed by " + trusted + ".", "signature"
		case !st.Signer.Equal(e.Anchor):
			return "Refusing a change of curator key: " + e.Path + " is signed by " + pkarr.URI(st.Signer) + ", but this server trusts " + trusted + ". A new curator key takes a restart with --pubkey set to it.", "curator.pubkey"
		}
	}
	if registry.CompareVersions(reg.Version(), old.reg.Version()) < 0 {
		return "Refusing a rollback: " + e.Path + " is version " + reg.Version() + ", lower than the version " + old.reg.Version() + " being served. An older copy put back, even one its curator signed, is not loaded; publish the content again under a higher version.", "version"
	}
	return "", ""
}

// ReloadRegistryText implements gen.ToolHandlers.
func (h *Handlers) ReloadRegistryText(out *gen.ReloadRegistryOutput) string {
	verified := "not verified by a curator signature"
	if out.Verified {
		verified = "verified by its curator's signature"
	}
	return fmt.Sprintf("Reloaded: now serving registry version %s, %d categories, SHA-256 %s, %s.", out.RegistryVersion, out.CategoryCount, out.RegistrySHA256, verified)
}
