package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/strictjson"
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

// reload serves the registry file as it is now; with signEdit, an edit of
// a file that names this server's curator key is signed by the server.
func (h *Handlers) reload(ctx context.Context, signEdit bool) (*gen.ReloadRegistryOutput, error) {
	state := func(s *snapshot, reloaded bool) *gen.ReloadRegistryOutput {
		return &gen.ReloadRegistryOutput{Reloaded: reloaded, RegistryVersion: s.reg.Version(), RegistrySHA256: s.reg.SHA256(), CategoryCount: len(s.reg.Categories()), Verified: s.signature.Verified}
	}
	if h.edit == nil {
		return nil, editFailure(h.noFile(), state(h.cur.Load(), false))
	}
	e := h.edit
	e.Lock()
	defer e.Unlock()
	old := h.cur.Load()
	refuse := func(text string, problems strictjson.Errors) error {
		out := state(old, false)
		out.Errors = []gen.Problem{}
		for _, p := range problems {
			out.Errors = append(out.Errors, gen.Problem{Path: p.Path, Reason: p.Reason})
		}
		return &gen.ToolError{Text: text + " The registry served is unchanged (version " + old.reg.Version() + ").", Structured: out}
	}
	data, doc, err := signature.ReadSigned(e.Path, e.MaxRegistryBytes)
	if err != nil {
		return nil, refuse("Cannot read "+e.Path+": "+err.Error()+".", strictjson.Errors{{Reason: err.Error()}})
	}
	reg, err := registry.Load(data)
	if err != nil {
		text, errs := invalidRegistry(e.Path, err)
		return nil, refuse(text, errs)
	}
	st := signature.Check(reg, doc)
	// The curator's hand edit, which 3gs sign hands to this server (see
	// SignHandEdit): the file names the key the server holds, its
	// signature no longer covers it (or is missing), and its bytes are not
	// the registry served, which the audit log records. The same bytes
	// with a signature deleted or expired are no edit: they take the
	// ordinary path, which refuses them, rather than being published
	// unsigned as if something had been signed.
	handEdit := signEdit && e.Key != nil && e.ReadOnly == "" && !st.Verified && reg.SHA256() != old.reg.SHA256() &&
		signature.CheckCurator(reg, curatorkey.Public(e.Key)) == nil && (e.Anchor == nil || e.Anchor.Equal(curatorkey.Public(e.Key)))
	var orig []byte
	if handEdit && registry.CompareVersions(reg.Version(), old.reg.Version()) == 0 {
		next := registry.BumpPatch(reg.Version())
		if next == reg.Version() {
			return nil, refuse(fmt.Sprintf("%s changed but kept version %s, which cannot be raised automatically. Set a higher \"version\" in the file and run 3gs sign again.", e.Path, reg.Version()), strictjson.Errors{{Path: "version", Reason: "not raisable"}})
		}
		bumped, err := reg.WithVersion(next, e.MaxRegistryBytes)
		if err != nil {
			return nil, refuse(fmt.Sprintf("%s changed but kept version %s, and raising it failed: %v. Set a higher \"version\" in the file and call reload_registry again.", e.Path, reg.Version(), err), strictjson.Errors{{Path: "version", Reason: err.Error()}})
		}
		orig, reg, data = data, bumped, bumped.Bytes()
	}
	if text, problems := e.admit(old, reg, st, signEdit, handEdit); text != "" {
		return nil, refuse(text, problems)
	}
	now := e.Now()
	if err := st.Stale(now); err != nil && !e.AllowExpired && !handEdit {
		msg := fmt.Sprintf("Refusing %s: %v. The curator signs it again with 3gs sign; --allow-expired loads it anyway.", e.Path, err)
		return nil, refuse(msg, strictjson.Errors{{Path: "signature.expires", Reason: err.Error()}})
	}
	st, err = e.Reload(now, auth.CallerFrom(ctx).Name, reg, data, orig, st)
	if err != nil {
		return nil, refuse("Cannot load the file with its audit log: "+err.Error()+".", strictjson.Errors{{Path: "audit", Reason: err.Error()}})
	}
	if handEdit && !st.Verified {
		// Nothing was signed: never report a hand edit as signed and
		// serve it unverified.
		return nil, refuse("The edit of "+e.Path+" was not signed (the audit log may already record it). Stop the server, run 3gs sign --key-file KEY "+signature.ShellQuote(e.Path)+", and start it again.", strictjson.Errors{{Path: "signature", Reason: "not signed"}})
	}
	modified := now
	if fi, err := os.Stat(e.Path); err == nil {
		modified = fi.ModTime()
	}
	next := newSnapshot(reg, e.newMatcher(reg), st, old.files, modified)
	h.publish(next)
	if e.Anchor == nil && st.Verified {
		e.Anchor, e.AnchorFrom = st.Signer, "the first verified registry this server loaded"
	}
	return state(next, true), nil
}

// invalidRegistry is what reload says of a file registry.Load refused
// with err, and the problems it lists.
func invalidRegistry(path string, err error) (string, strictjson.Errors) {
	var errs strictjson.Errors
	if !errors.As(err, &errs) {
		errs = strictjson.Errors{{Reason: err.Error()}}
	}
	var lines []string
	for _, p := range errs {
		lines = append(lines, "- "+p.Error())
	}
	return fmt.Sprintf("%s is not a valid registry (%d problems):\n%s\n", path, len(errs), strings.Join(lines, "\n")), errs
}

// admit says why reg, with signature status st, may not replace the
// served registry old, and the problems to report, or "" when it may: the
// anchor (checkAnchor), the signature and the curator key this server
// holds. signEdit and handEdit are reload's.
func (e *editor) admit(old *snapshot, reg *registry.Registry, st signature.Status, signEdit, handEdit bool) (string, strictjson.Errors) {
	// On the server that could sign the curator's hand edit, say how.
	signHint := ""
	if e.Key != nil && e.ReadOnly == "" && !signEdit && !st.Verified && signature.CheckCurator(reg, curatorkey.Public(e.Key)) == nil {
		signHint = " After a hand edit, run 3gs sign " + signature.ShellQuote(e.Path) + " on this server's machine, as the user it runs as: with this server running, sign asks it to record, sign and serve the edit."
	}
	if msg, path := e.checkAnchor(old, reg, st, handEdit); msg != "" {
		return msg + " The registry served before stays." + signHint, strictjson.Errors{{Path: path, Reason: msg}}
	}
	if err := st.Refuse(reg); err != nil && !e.AllowUnsigned && !handEdit {
		msg := "The signature of " + e.Path + " does not verify: " + err.Error() + "."
		if errors.Is(err, signature.ErrMissing) {
			msg = e.Path + " names the curator key " + reg.Curator().Pubkey + " but has no signature file " + e.Path + signature.Suffix + "; the curator signs it with 3gs sign."
		}
		return msg + " The registry served before stays." + signHint, strictjson.Errors{{Path: "", Reason: "signature: " + err.Error()}}
	}
	if e.Key != nil {
		if err := signature.CheckCurator(reg, curatorkey.Public(e.Key)); err != nil {
			return "The file names another curator than the key this server holds: " + err.Error() + ".", strictjson.Errors{{Path: "curator.pubkey", Reason: err.Error()}}
		}
	}
	return "", nil
}

// checkAnchor says why reg may not replace the served registry old, and
// the path of the problem, or "" when it may. A file anyone can write must
// not be able to change who the curator is, bring back an older version,
// or shed its signature, whatever --allow-unsigned says:
//   - once a curator key is trusted, only a registry verified under that
//     key loads (another key, or no valid signature, is refused);
//   - a version lower than the one served is a rollback, and so is the
//     same bytes with a signature made before the one served
//     (olderSignature; other bytes answer to the version and log head).
//
// handEdit: the server signs reg with the trusted key itself (see
// SignHandEdit), so its signature file is not what vouches for it.
func (e *editor) checkAnchor(old *snapshot, reg *registry.Registry, st signature.Status, handEdit bool) (msg, path string) {
	if e.Anchor != nil && !handEdit {
		trusted := curatorkey.URI(e.Anchor) + " (" + e.AnchorFrom + ")"
		switch {
		case !st.Verified && !st.Signed():
			return "Refusing a downgrade to an unsigned registry: " + e.Path + " has no valid signature file, and this server trusts only registries signed by " + trusted + ".", "signature"
		case !st.Verified:
			return "Refusing " + e.Path + ": its signature does not verify (" + st.Problem.Error() + "), and this server trusts only registries signed by " + trusted + ".", "signature"
		case !st.Signer.Equal(e.Anchor):
			return "Refusing a change of curator key: " + e.Path + " is signed by " + curatorkey.URI(st.Signer) + ", but this server trusts " + trusted + ". A new curator key takes a restart with --pubkey set to it.", "curator.pubkey"
		}
	}
	if was, now := old.signature.Log, st.Log; was != nil && now != nil && st.Verified && now.Seq < was.Seq {
		return fmt.Sprintf("Refusing a rollback: the signature of %s covers the audit log up to seq %d, before seq %d, which the registry being served covers. An older registry and signature were put back.", e.Path, now.Seq, was.Seq), "signature.log_seq"
	}
	if msg := olderSignature(old.signature, st); msg != "" && reg.SHA256() == old.reg.SHA256() {
		return "Refusing a rollback: the signature of " + e.Path + " " + msg, "signature.signed_at"
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
	return fmt.Sprintf("Reloaded: now serving registry version %s, %s, SHA-256 %s, %s.", out.RegistryVersion, categories(out.CategoryCount), out.RegistrySHA256, verified)
}
