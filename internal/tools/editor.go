package tools

import (
	"errors"
	"fmt"
	"github.com/three-good-sources/3gs/internal/registry"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/store"
)

// EditConfig lets the admin tools change the registry file being served
// (store.EditorConfig); internal/curation makes every change.
type EditConfig = store.EditorConfig

// errNoFile answers admin tools on a server without a registry file.
const errNoFile = "This server serves the registry built into 3gs, which has no file to change. Start it with --registry PATH (or REGISTRY_PATH) to edit a registry."

// noFile is what the curator tools answer on a server that cannot edit:
// a read replica names its origin, where edits go.
func (h *Handlers) noFile() string {
	if h.origin != "" {
		return "This node is a read replica: it follows " + h.origin + " and serves that node's signed registry, which it cannot change. Make the change at " + h.origin + " (the curator's node); this node serves it after its next refresh."
	}
	return errNoFile
}

// storeProblem words for the model what internal/store refused; the
// server's operator is who can act on a setting, so it is named as the
// operator sets it.
func storeProblem(err error) string {
	var (
		ro  *store.ReadOnlyError
		key *store.KeyNeededError
		big *registry.TooLargeError
		le  *store.LogError
		p   *auditlog.Problem
	)
	switch {
	case errors.As(err, &ro):
		return ro.Why
	case errors.As(err, &key) && key.Log:
		return fmt.Sprintf("the audit log %s is signed by the curator key, and this server does not hold it, so it could not record the change. Start the server with --key-file (or PKARR_SECRET_KEY) to edit here", key.Path)
	case errors.As(err, &key):
		return "the registry is signed by its curator and this server has no curator key, so a change would break the signature. Start the server with --key-file (or PKARR_SECRET_KEY) to edit here, or edit the file and run 3gs sign"
	case errors.As(err, &big):
		return fmt.Sprintf("with this change the registry would be %d bytes, more than the %d-byte limit this server reads (--max-registry-bytes, THREEGS_MAX_REGISTRY_BYTES), so nothing was written. Restart the server with a higher limit, or remove categories first", big.Size, big.Limit)
	case errors.As(err, &le) && errors.Is(le.Err, auditlog.ErrLegacy):
		return fmt.Sprintf("the audit log %s is %v. Run 3gs audit migrate --key-file KEY %s to keep it as %s.v1 and start a signed log that records its digest, or name a new file with --audit-log", le.Path, le.Err, store.RegistryOf(le.Path), le.Path)
	case errors.As(err, &le) && errors.Is(le.Err, auditlog.ErrMissing):
		return fmt.Sprintf("the audit log %s cannot be read: %v. To fix: %s", le.Path, le.Err, auditlog.MissingFix(le.Path, store.RegistryOf(le.Path)))
	case errors.As(err, &le) && errors.As(le.Err, &p):
		return fmt.Sprintf("the audit log %s does not verify at %v. Nothing was changed. 3gs audit verify shows the whole log; restore it from a backup, or, to start a new log and lose the old one's history, move it aside", le.Path, le.Err)
	case errors.As(err, &le):
		return fmt.Sprintf("the audit log %s cannot be read: %v", le.Path, le.Err)
	}
	return err.Error()
}

// wordedError is err worded by storeProblem, still wrapping err.
type wordedError struct{ err error }

func (e *wordedError) Error() string { return storeProblem(e.err) }
func (e *wordedError) Unwrap() error { return e.err }

// changeOutput is the state a change leaves, shared by upsert and remove.
func changeOutput(s store.Served, slug string) gen.RemoveCategoryOutput {
	return gen.RemoveCategoryOutput{
		Slug: slug, RegistryVersion: s.Registry.Version(), Updated: s.Registry.Updated(), RegistrySHA256: s.Registry.SHA256(),
		CategoryCount: len(s.Registry.Categories()), Signed: s.Signature.Verified,
	}
}

// editFailure reports a change that did not happen: the structured content
// describes the registry still served.
// The text says once, at its end, that nothing was changed, with one full
// stop before it, whatever the reason it carries ends with.
func editFailure(text string, state gen.ToolOutput) error {
	text = strings.TrimRight(text, ". ") + "."
	if !strings.Contains(text, "Nothing was changed") {
		text += " Nothing was changed."
	}
	return &gen.ToolError{Text: text, Structured: state}
}

func changeText(version, updated string, count int, sha string, signed bool) string {
	sig := "The file is not signed."
	if signed {
		sig = "The file is signed with the curator key."
	}
	return fmt.Sprintf("Registry version %s, updated %s, %s, SHA-256 %s. %s", version, updated, categories(count), sha, sig)
}

// Renew signs the served registry again when its signature has less
// than half its validity left (curation.Node.Renew), and serves the new
// signature. It reports whether it signed; a server without the key, or
// one serving read-only, does nothing.
func (h *Handlers) Renew() (bool, error) {
	if h.node == nil {
		return false, nil
	}
	signed, err := h.node.Renew()
	if err != nil {
		return false, &wordedError{err}
	}
	return signed, nil
}
