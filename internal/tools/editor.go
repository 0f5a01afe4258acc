package tools

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// EditConfig lets the admin tools change the registry file being served.
type EditConfig struct {
	// Path is the registry file.
	Path string
	// Key, when set, is the curator's key: every change is re-signed.
	Key ed25519.PrivateKey
	// AuditLog is the audit log each change is appended to
	// (internal/auditlog).
	AuditLog string
	// Validity is how long the signatures the server writes vouch for the
	// registry; zero means signature.DefaultValidity.
	Validity time.Duration
	// AllowExpired lets reload_registry load a registry whose signature
	// has expired, as --allow-expired does at start.
	AllowExpired bool
	// NewMatcher builds the matcher of a new snapshot.
	NewMatcher func(*registry.Registry) matcher.Matcher
	// AllowUnsigned lets reload_registry serve a file whose signature does
	// not verify, reported as unverified, as --allow-unsigned does at start.
	AllowUnsigned bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ReadOnly, when not empty, is why this server may not change the
	// file (another process holds its lock); curator tools answer with it.
	ReadOnly string
	// MaxRegistryBytes bounds the registry file as --max-registry-bytes
	// does: reload_registry and the check before a change read at most
	// this much, and a change that would make the file larger is refused,
	// since the next start could not load it. Zero means registry.MaxSize.
	MaxRegistryBytes int64
	// Anchor is the curator key reload_registry trusts: --pubkey, the
	// public half of --key-file, or else the signer of the first verified
	// registry served (set by reload when still nil). AnchorFrom says which,
	// for messages. Once set, only a registry verified under it is loaded.
	Anchor     ed25519.PublicKey
	AnchorFrom string
}

// editor makes changes one at a time. Readers never wait for it: they load
// the current snapshot, and a change stores a new one only once the file
// and the audit log hold it.
type editor struct {
	EditConfig
	mu sync.Mutex
	// log is the audit log, opened at start (OpenAuditLog) or by the
	// first change.
	log *store.Log
}

// validity is how long a signature written now vouches for the registry.
func (e *editor) validity() time.Duration {
	if e.Validity > 0 {
		return e.Validity
	}
	return signature.DefaultValidity
}

func newEditor(c EditConfig) *editor {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxRegistryBytes <= 0 {
		c.MaxRegistryBytes = registry.MaxSize
	}
	return &editor{EditConfig: c}
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

// change applies edit to a copy of the current document, then validates the
// whole registry, records it in the audit log, writes it (signed when a key
// is set) and serves it. Any failure before the swap leaves the file, its
// signature and the served snapshot as they were.
func (h *Handlers) change(caller, tool, slug string, edit func(doc *gen.Registry) error) (*snapshot, error) {
	e := h.edit
	e.mu.Lock()
	defer e.mu.Unlock()
	old := h.cur.Load()
	if e.ReadOnly != "" {
		return nil, errors.New(e.ReadOnly)
	}
	if old.signature.Signed() && e.Key == nil {
		return nil, errors.New("the registry is signed by its curator and this server has no curator key, so a change would break the signature. Start the server with --key-file (or PKARR_SECRET_KEY) to edit here, or edit the file and run 3gs sign")
	}
	doc := old.reg.Document()
	if err := edit(&doc); err != nil {
		return nil, err
	}
	now := e.Now()
	doc.Updated = now.UTC().Format(time.DateOnly)
	doc.Version = registry.BumpPatch(doc.Version)
	data := gen.EncodeRegistry(&doc) // schema order, so the file's diff is the change
	// A file larger than the limit could not be loaded by the next start.
	// That is the server's limit, not a fault in the caller's arguments, so
	// it is refused as a failed change rather than as invalid params.
	if int64(len(data)) > e.MaxRegistryBytes {
		return nil, fmt.Errorf("with this change the registry would be %d bytes, more than the %d-byte limit this server reads (--max-registry-bytes, THREEGS_MAX_REGISTRY_BYTES), so nothing was written. Restart the server with a higher limit, or remove categories first", len(data), e.MaxRegistryBytes)
	}
	reg, err := registry.Load(data)
	if err != nil {
		return nil, err
	}
	// The change is made to the bytes this server serves; if the file is
	// no longer those bytes (a hand edit, another program), writing would
	// silently throw that edit away.
	if err := e.checkBase(old.reg); err != nil {
		return nil, err
	}
	// The audit entry goes first, then the registry, signed with the new
	// head; a failed write takes the entry back (see internal/store).
	l, entries, err := h.record(now, caller, tool, slug, old.reg, reg)
	if err != nil {
		return nil, err
	}
	head := l.Head()
	done, err := store.Commit{
		Path: e.Path, Log: l, Entries: entries, Head: &head, Key: e.Key, Now: now, Expires: now.Add(e.validity()),
		Data: data, Base: old.reg.Bytes(), Limit: e.MaxRegistryBytes,
	}.Commit()
	if err != nil {
		var ce *store.Error
		if !errors.As(err, &ce) || ce.InLog {
			return nil, err
		}
		err = ce.Err
		if ce.UndoErr != nil {
			err = fmt.Errorf("%w; and the audit log entry for it could not be removed (%v): the next start removes it", err, ce.UndoErr)
		}
		return nil, fmt.Errorf("writing %s: %w", e.Path, err)
	}
	st := signature.Status{}
	if e.Key != nil {
		st = signature.Check(reg, done.Signature) // what was written, without reading it back
	}
	e.log.Served = done.Head
	next := newSnapshot(reg, e.NewMatcher(reg), st, old.files, now)
	h.publish(next)
	return next, nil
}

// checkBase refuses a write unless the file on disk still holds base's
// bytes.
func (e *editor) checkBase(base *registry.Registry) error {
	data, err := signature.ReadLimited(e.Path, e.MaxRegistryBytes, "registry")
	if err != nil {
		return fmt.Errorf("reading %s before changing it: %w", e.Path, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != base.SHA256() {
		return fmt.Errorf("%s changed on disk since this server loaded it (sha256 %s, not the served %s): someone edited it by hand or another program wrote it. To keep that edit, run 3gs sign %s on this server's machine (with this server running, sign asks it to record, sign and serve the edit), or call reload_registry if the file was signed by its curator; then make the change again", e.Path, hex.EncodeToString(sum[:8])+"…", base.SHA256()[:16]+"…", signature.ShellQuote(e.Path))
	}
	return nil
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

// Renew signs the served registry again when its signature has less than
// half its validity left, so that a
// server holding the curator key keeps its registry, and what peers and
// followers read from it, from expiring between changes. The bytes do not
// change, so neither does the log: the new signature covers the same
// head. It reports whether it signed; a server without the key, or one
// serving read-only, does nothing.
func (h *Handlers) Renew() (bool, error) {
	e := h.edit
	if e == nil || e.Key == nil || e.ReadOnly != "" {
		return false, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	old := h.cur.Load()
	st, now := old.signature, e.Now()
	// An expired signature, or one that never expires, is not renewed: a
	// server serving one was told to (--allow-expired), and signing it
	// again would vouch afresh for what may be an old copy put back. The
	// curator signs it with 3gs sign.
	if !st.Verified || st.Stale(now) != nil || st.Expires.Sub(now) > e.validity()/2 {
		return false, nil
	}
	if err := e.checkBase(old.reg); err != nil {
		return false, err
	}
	head := st.Log
	if head == nil && e.log != nil && e.log.Log != nil && e.log.Last() != nil && e.log.Last().After == old.reg.SHA256() {
		h := e.log.Head()
		head = &h
	}
	// Only the signature changes, so only it is written: rewriting the
	// registry too could undo a hand edit made since checkBase.
	done, err := store.Commit{Path: e.Path, Head: head, Key: e.Key, Now: now, Expires: now.Add(e.validity()), Base: old.reg.Bytes()}.Commit()
	if err != nil {
		return false, fmt.Errorf("signing %s again before it expires: %w", e.Path, err)
	}
	doc := done.Signature
	next := *old
	next.signature = signature.Check(old.reg, doc)
	h.publish(&next)
	return true, nil
}
