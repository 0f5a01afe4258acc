package curation

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// The workflows only a server has: its audit log opened at start, the
// head it serves, the registry file reloaded (or the curator's hand edit
// signed), and the signature renewed before it expires.

// OpenLog checks the audit log of a server about to start editing the
// registry it serves (store.Editor.Open), and returns the repairs it made.
func (n *Node) OpenLog() ([]string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.editor.Open(n.serving.Current())
}

// AuditHead is the audit log's path, the head the server serves up to and
// the state served with it, read together. A server that never opened its
// log opens it here, as its first change would.
func (n *Node) AuditHead() (string, auditlog.Head, store.Served, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	cur := n.serving.Current()
	head, err := n.editor.Served(cur)
	return n.editor.AuditLog, head, cur, err
}

// Renew signs the served registry again when its signature has less than
// half its validity left (store.Editor.Renew), and serves the new
// signature. It reports whether it signed; a server without the key, or
// one serving read-only, does nothing.
func (n *Node) Renew() (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.editor
	if e.Key == nil || e.ReadOnly != "" {
		return false, nil
	}
	cur, signed, err := e.Renew(n.serving.Current())
	if err != nil || !signed {
		return false, err
	}
	n.serving.Publish(cur)
	return true, nil
}

// ReloadError is a reload refused: Text says why, Fix which remedy the
// adapter words with its own flags and commands (FixNone when Text says
// it all), Problems lists what was found, each with its path in the file;
// Version is the version still served; Path is the registry file.
type ReloadError struct {
	Text     string
	Fix      ReloadFix
	Problems strictjson.Errors
	Version  string
	Path     string
}

// ReloadFix is the remedy for a refused reload that lies outside this
// server's tools: a setting of the server or a command of the curator.
type ReloadFix int

const (
	FixNone ReloadFix = iota
	// FixSignOrAllowExpired: the signature expired; the curator signs
	// again, or the operator lets expired registries load.
	FixSignOrAllowExpired
	// FixSignWhileStopped: the server could not sign the curator's edit;
	// the curator signs it with the key while the server is stopped.
	FixSignWhileStopped
	// FixRestartWithKey: the file is signed by another curator key, which
	// only a restart trusting that key accepts.
	FixRestartWithKey
)

func (e *ReloadError) Error() string { return e.Text }

// Reload serves the registry file as it is now, once it passes the
// checks a start makes and the anchor (a trusted curator key, no
// rollback), recorded in the audit log by caller when the log does not
// record it. With signEdit (3gs sign handing the curator's hand edit to
// the server that holds the key), an edit of a file that names this
// server's curator key is recorded, signed (with the next patch version
// when the version was left as served) and served. Refusals are
// *ReloadError.
func (n *Node) Reload(caller string, signEdit bool) (store.Served, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.editor
	old := n.serving.Current()
	refuseFix := func(text string, fix ReloadFix, problems strictjson.Errors) (store.Served, error) {
		return old, &ReloadError{Text: text, Fix: fix, Problems: problems, Version: old.Registry.Version(), Path: e.Path}
	}
	refuse := func(text string, problems strictjson.Errors) (store.Served, error) {
		return refuseFix(text, FixNone, problems)
	}
	data, doc, err := signature.ReadSigned(e.Path, e.MaxRegistryBytes)
	if err != nil {
		return refuse("Cannot read "+e.Path+": "+err.Error()+".", strictjson.Errors{{Reason: err.Error()}})
	}
	reg, err := registry.Load(data)
	if err != nil {
		text, errs := invalidRegistry(e.Path, err)
		return refuse(text, errs)
	}
	st := signature.Check(reg, doc)
	// The curator's hand edit, which 3gs sign hands to this server: the
	// file names the key the server holds, its signature no longer covers
	// it (or is missing), and its bytes are not the registry served, which
	// the audit log records. The same bytes with a signature deleted or
	// expired are no edit: they take the ordinary path, which refuses
	// them, rather than being published unsigned as if something had been
	// signed.
	handEdit := signEdit && e.Key != nil && e.ReadOnly == "" && !st.Verified && reg.SHA256() != old.Registry.SHA256() &&
		signature.CheckCurator(reg, curatorkey.Public(e.Key)) == nil && (e.Anchor == nil || e.Anchor.Equal(curatorkey.Public(e.Key)))
	var orig []byte
	if handEdit && registry.CompareVersions(reg.Version(), old.Registry.Version()) == 0 {
		next := registry.BumpPatch(reg.Version())
		if next == reg.Version() {
			return refuse(fmt.Sprintf("%s changed but kept version %s, which cannot be raised automatically. Set a higher \"version\" in the file and run 3gs sign again.", e.Path, reg.Version()), strictjson.Errors{{Path: "version", Reason: "not raisable"}})
		}
		bumped, err := reg.WithVersion(next, e.MaxRegistryBytes)
		if err != nil {
			return refuse(fmt.Sprintf("%s changed but kept version %s, and raising it failed: %v. Set a higher \"version\" in the file and call reload_registry again.", e.Path, reg.Version(), err), strictjson.Errors{{Path: "version", Reason: err.Error()}})
		}
		orig, reg, data = data, bumped, bumped.Bytes()
	}
	if text, fix, problems := admit(e, old, reg, st, signEdit, handEdit); text != "" {
		return refuseFix(text, fix, problems)
	}
	now := e.Now()
	if err := st.Stale(now); err != nil && !e.AllowExpired && !handEdit {
		msg := fmt.Sprintf("Refusing %s: %v.", e.Path, err)
		return refuseFix(msg, FixSignOrAllowExpired, strictjson.Errors{{Path: "signature.expires", Reason: err.Error()}})
	}
	st, err = e.Reload(now, caller, reg, data, orig, st)
	if err != nil {
		return refuse("Cannot load the file with its audit log: "+err.Error()+".", strictjson.Errors{{Path: "audit", Reason: err.Error()}})
	}
	if handEdit && !st.Verified {
		// Nothing was signed: never report a hand edit as signed and
		// serve it unverified.
		return refuseFix("The edit of "+e.Path+" was not signed (the audit log may already record it).", FixSignWhileStopped, strictjson.Errors{{Path: "signature", Reason: "not signed"}})
	}
	modified := now
	if fi, err := os.Stat(e.Path); err == nil {
		modified = fi.ModTime()
	}
	next := store.Served{Registry: reg, Signature: st, Modified: modified}
	n.serving.Publish(next)
	if e.Anchor == nil && st.Verified {
		e.Anchor, e.AnchorFrom = st.Signer, "the first verified registry this server loaded"
	}
	return next, nil
}

// olderSignature says why the verified signature next, about to replace
// the verified signature held, is older than it ("" when it is not): an
// older valid signature for the same bytes and log head verifies as well
// as the newer one but expires sooner, so putting it back would end the
// registry's service early, or, kept for later, carry an old copy. The
// peer and follow paths refuse the same (peer.Accept).
func olderSignature(held, next signature.Status) string {
	if !held.Verified || !next.Verified {
		return ""
	}
	if !next.SignedAt.Before(held.SignedAt) {
		return ""
	}
	return "was made at " + next.SignedAt.UTC().Format(time.RFC3339) + ", before the signature of the registry being served (" + held.SignedAt.UTC().Format(time.RFC3339) + "). An older signature put back is not loaded; the curator signs again (3gs sign), which makes a later one."
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
func admit(e *store.Editor, old store.Served, reg *registry.Registry, st signature.Status, signEdit, handEdit bool) (string, ReloadFix, strictjson.Errors) {
	// On the server that could sign the curator's hand edit, say how.
	signHint := ""
	if e.Key != nil && e.ReadOnly == "" && !signEdit && !st.Verified && signature.CheckCurator(reg, curatorkey.Public(e.Key)) == nil {
		signHint = " After a hand edit, run 3gs sign " + signature.ShellQuote(e.Path) + " on this server's machine, as the user it runs as: with this server running, sign asks it to record, sign and serve the edit."
	}
	if msg, path, fix := checkAnchor(e, old, reg, st, handEdit); msg != "" {
		return msg + " The registry served before stays." + signHint, fix, strictjson.Errors{{Path: path, Reason: msg}}
	}
	if err := st.Refuse(reg); err != nil && !e.AllowUnsigned && !handEdit {
		msg := "The signature of " + e.Path + " does not verify: " + err.Error() + "."
		if errors.Is(err, signature.ErrMissing) {
			msg = e.Path + " names the curator key " + reg.Curator().Pubkey + " but has no signature file " + e.Path + signature.Suffix + "; the curator signs it with 3gs sign."
		}
		return msg + " The registry served before stays." + signHint, FixNone, strictjson.Errors{{Path: "", Reason: "signature: " + err.Error()}}
	}
	if e.Key != nil {
		if err := signature.CheckCurator(reg, curatorkey.Public(e.Key)); err != nil {
			return "The file names another curator than the key this server holds: " + err.Error() + ".", FixNone, strictjson.Errors{{Path: "curator.pubkey", Reason: err.Error()}}
		}
	}
	return "", FixNone, nil
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
func checkAnchor(e *store.Editor, old store.Served, reg *registry.Registry, st signature.Status, handEdit bool) (msg, path string, fix ReloadFix) {
	if e.Anchor != nil && !handEdit {
		trusted := curatorkey.URI(e.Anchor) + " (" + e.AnchorFrom + ")"
		switch {
		case !st.Verified && !st.Signed():
			return "Refusing a downgrade to an unsigned registry: " + e.Path + " has no valid signature file, and this server trusts only registries signed by " + trusted + ".", "signature", FixNone
		case !st.Verified:
			return "Refusing " + e.Path + ": its signature does not verify (" + st.Problem.Error() + "), and this server trusts only registries signed by " + trusted + ".", "signature", FixNone
		case !st.Signer.Equal(e.Anchor):
			return "Refusing a change of curator key: " + e.Path + " is signed by " + curatorkey.URI(st.Signer) + ", but this server trusts " + trusted + ".", "curator.pubkey", FixRestartWithKey
		}
	}
	if was, now := old.Signature.Log, st.Log; was != nil && now != nil && st.Verified && now.Seq < was.Seq {
		return fmt.Sprintf("Refusing a rollback: the signature of %s covers the audit log up to seq %d, before seq %d, which the registry being served covers. An older registry and signature were put back.", e.Path, now.Seq, was.Seq), "signature.log_seq", FixNone
	}
	if msg := olderSignature(old.Signature, st); msg != "" && reg.SHA256() == old.Registry.SHA256() {
		return "Refusing a rollback: the signature of " + e.Path + " " + msg, "signature.signed_at", FixNone
	}
	if registry.CompareVersions(reg.Version(), old.Registry.Version()) < 0 {
		return "Refusing a rollback: " + e.Path + " is version " + reg.Version() + ", lower than the version " + old.Registry.Version() + " being served. An older copy put back, even one its curator signed, is not loaded; publish the content again under a higher version.", "version", FixNone
	}
	return "", "", FixNone
}
