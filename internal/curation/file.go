package curation

import (
	"crypto/ed25519"
	"errors"
	"io/fs"
	"time"

	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
)

// ReadError is a registry file a command's node could not read or load:
// Err is safefile's or registry.Load's.
type ReadError struct {
	Path string
	Err  error
}

func (e *ReadError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// WrongKeyError is a curator key that cannot sign the registry at Path,
// which names the curator Curator: Err is signature.CheckCurator's.
type WrongKeyError struct {
	Path    string
	Curator string
	Err     error
}

func (e *WrongKeyError) Error() string { return "the key cannot sign " + e.Path + ": " + e.Err.Error() }
func (e *WrongKeyError) Unwrap() error { return e.Err }

// UnverifiedError is a registry file whose signature no longer verifies
// (Problem): it was changed since it was signed, and signing a change now
// would bless those changes too.
type UnverifiedError struct {
	Path    string
	Problem error
}

func (e *UnverifiedError) Error() string {
	return e.Path + signature.Suffix + " does not verify (" + e.Problem.Error() + "), so " + e.Path + " was changed since it was signed"
}

// read loads the file a command's node changes, under the lock its
// caller holds, and checks that a change signed with the node's key
// would not vouch for more than the change: the key is the curator's,
// and the signature still verifies. With needKey, a registry that names a
// curator key is refused without one.
func (n *Node) read(needKey bool) (*registry.Registry, error) {
	f := n.file
	reg, err := registry.LoadFileLimit(f.Path, f.Limit)
	if err != nil {
		return nil, &ReadError{Path: f.Path, Err: err}
	}
	if _, named := reg.CuratorKey(); named && needKey && f.Key == nil {
		return nil, &store.KeyNeededError{Path: f.Path}
	}
	if f.Key == nil {
		return reg, nil
	}
	if err := signature.CheckCurator(reg, curatorkey.Public(f.Key)); err != nil {
		return nil, &WrongKeyError{Path: f.Path, Curator: reg.Curator().Pubkey, Err: err}
	}
	doc, err := signature.ReadLimited(f.Path+signature.Suffix, signature.MaxSize, "signature file")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &ReadError{Path: f.Path + signature.Suffix, Err: err}
	}
	if st := signature.Check(reg, doc); st.Signed() && !st.Verified {
		return nil, &UnverifiedError{Path: f.Path, Problem: st.Problem}
	}
	return reg, nil
}

// now is the command's clock.
func (n *Node) now() time.Time {
	if n.file != nil && n.file.Now != nil {
		return n.file.Now()
	}
	if n.editor != nil {
		return n.editor.Now()
	}
	return time.Now()
}

// Sign signs reg, the registry file as the command read it under the
// lock (3gs sign), recording it in the audit log first when the log does
// not already end at it, with the next patch version when it was edited
// since the log recorded it (store.File.Sign). A key that is not the
// registry's curator's is refused (*WrongKeyError): its signature could
// never verify. A server signs the curator's hand edit with
// Reload(caller, true) instead.
func (n *Node) Sign(reg *registry.Registry) (*store.Signed, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f := n.file
	if f.Key == nil {
		return nil, &store.KeyNeededError{Path: f.Path}
	}
	if err := signature.CheckCurator(reg, curatorkey.Public(f.Key)); err != nil {
		return nil, &WrongKeyError{Path: f.Path, Curator: reg.Curator().Pubkey, Err: err}
	}
	return f.Sign(reg)
}

// MigrateLog replaces the audit log of the old unsigned format with a
// signed one whose start entry records reg and digest, the old file's
// SHA-256 (3gs audit migrate, store.File.Migrate): the old log is kept as
// LOG.v1, and a failure puts it back.
func (n *Node) MigrateLog(reg *registry.Registry, digest string) (*store.Signed, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.file.Migrate(reg, digest)
}

// Init writes a new registry, data, at path with a new audit log at
// logPath whose start entry records it, signed with key for validity
// (3gs init, store.Init).
func Init(path, logPath string, data []byte, key ed25519.PrivateKey, now time.Time, validity time.Duration) (auditlog.Head, error) {
	return store.Init(path, logPath, data, key, now, validity)
}
