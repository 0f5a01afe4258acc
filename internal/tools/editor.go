package tools

import (
	"errors"
	"fmt"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// EditConfig lets the admin tools change the registry file being served
// (store.EditorConfig).
type EditConfig = store.EditorConfig

// editor is the server's writer of the registry file (store.Editor),
// with what tools build from each registry it writes.
type editor struct {
	*store.Editor
	newMatcher func(*registry.Registry) matcher.Matcher
}

func newEditor(c EditConfig, newMatcher func(*registry.Registry) matcher.Matcher) *editor {
	return &editor{Editor: store.NewEditor(c), newMatcher: newMatcher}
}

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

// change applies edit to a copy of the current document and has the
// editor validate, record, write and sign it (store.Editor.Change), then
// serves it. Any failure before the swap leaves the file, its signature and
// the served snapshot as they were.
func (h *Handlers) change(caller, tool, slug string, edit func(doc *gen.Registry) error) (*snapshot, error) {
	return h.changeAs(caller, actions[tool], slug, edit)
}

// changeAs is change recorded in the audit log as action.
func (h *Handlers) changeAs(caller string, action gen.AuditAction, slug string, edit func(doc *gen.Registry) error) (*snapshot, error) {
	e := h.edit
	e.Lock()
	defer e.Unlock()
	old := h.cur.Load()
	cur, err := e.Change(old.served(), caller, action, slug, edit)
	if err != nil {
		return nil, err
	}
	next := newSnapshot(cur.Registry, e.newMatcher(cur.Registry), cur.Signature, old.files, cur.Modified)
	h.publish(next)
	return next, nil
}

// categoryErrors turns the problems of one category in a whole-registry
// check into argument problems: "categories.SLUG.sources[1].url" becomes
// "category.sources[1].url". Problems elsewhere keep their path.
func categoryErrors(err error, slug string) error {
	var errs strictjson.Errors
	if !errors.As(err, &errs) {
		return err
	}
	prefix := "categories." + slug
	out := make(strictjson.Errors, 0, len(errs))
	for _, e := range errs {
		p := e.Path
		if rest, ok := strings.CutPrefix(p, prefix); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			p = "category" + rest
		}
		out = append(out, &strictjson.Error{Path: p, Reason: e.Reason})
	}
	return out
}

// changeOutput is the state a change leaves, shared by upsert and remove.
func changeOutput(s *snapshot, slug string) gen.RemoveCategoryOutput {
	return gen.RemoveCategoryOutput{
		Slug: slug, RegistryVersion: s.reg.Version(), Updated: s.reg.Updated(), RegistrySHA256: s.reg.SHA256(),
		CategoryCount: len(s.reg.Categories()), Signed: s.signature.Verified,
	}
}

// editFailure reports a change that did not happen: the structured content
// describes the registry still served.
// The text says once, at its end, that nothing was changed, with one full
// stop before it, whatever the reason it carries ends with.
func editFailure[T any](text string, state T) error {
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
// than half its validity left (store.Editor.Renew), and serves the new
// signature. It reports whether it signed; a server without the key, or
// one serving read-only, does nothing.
func (h *Handlers) Renew() (bool, error) {
	e := h.edit
	if e == nil || e.Key == nil || e.ReadOnly != "" {
		return false, nil
	}
	e.Lock()
	defer e.Unlock()
	old := h.cur.Load()
	cur, signed, err := e.Editor.Renew(old.served())
	if err != nil || !signed {
		return false, err
	}
	next := *old
	next.signature = cur.Signature
	h.publish(&next)
	return true, nil
}
