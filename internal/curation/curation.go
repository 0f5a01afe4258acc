// Package curation is every change to the state a node serves, each one
// function: a category upserted or removed, a proposal accepted or
// rejected, an endorsement, the redirects 3gs check applies, a signature
// (3gs sign, or a server signing the curator's hand edit), a reload of the
// registry file, a renewal of its signature. The MCP tools
// (internal/tools) and the commands (internal/cli) are its adapters: they
// decode arguments, call one function here and word its result or its
// typed error, the tools for the model and the commands for the terminal.
//
// A Node holds the store that writes: a server's store.Editor, whose new
// state it publishes through the Serving the tools give it, or a
// command's store.File, used under the registry's file lock. It holds the
// proposals store when there is one. A Node serializes its workflows with
// one lock, held from reading the state served to publishing the next, so
// no adapter locks anything.
package curation

import (
	"crypto/ed25519"
	"errors"
	"sync"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/store"
)

// Serving is the state a server serves, kept by its adapter (the tools'
// snapshot): a Node reads it before a change and publishes the next one,
// both under its lock.
type Serving interface {
	// Current is what is served now, its signature as checked when it
	// was loaded or written.
	Current() store.Served
	// Publish serves next from now on. A next with the same Registry
	// pointer as the one served changed only its signature.
	Publish(next store.Served)
}

// Node is the one writer of a registry file, its signature, its audit log
// and its proposals: a server's (NewServer) or a command's (NewFile).
type Node struct {
	mu      sync.Mutex
	editor  *store.Editor // a server's; nil for a command
	serving Serving
	file    *store.File // a command's; nil for a server
	props   *proposals.File
}

// NewServer is the node of a server that serves, and may change, the
// registry file c names; s is what it serves.
func NewServer(c store.EditorConfig, s Serving) *Node {
	return &Node{editor: store.NewEditor(c), serving: s}
}

// NewFile is the node of a command that changes the registry file f
// names. The command holds the registry's lock (safefile.TryLock) for as
// long as it uses the node.
func NewFile(f store.File) *Node {
	return &Node{file: &f}
}

// SetProposals makes p the proposals the node decides, each decision
// signed with the node's curator key when it holds one. Call it before
// serving.
func (n *Node) SetProposals(p *proposals.File) {
	n.props = p
	if p != nil {
		p.SignDecisions(n.key())
	}
}

// key is the curator key the node signs with, nil when it holds none.
func (n *Node) key() ed25519.PrivateKey {
	if n.editor != nil {
		return n.editor.Key
	}
	return n.file.Key
}

// Proposals is the proposals store, nil when the node takes none.
func (n *Node) Proposals() *proposals.File { return n.props }

// ReadOnly is why a server node may not change its file (another
// process holds its lock), or "" when it may; "" for a command's node.
// It is set at start and never changes, so reading it takes no lock.
func (n *Node) ReadOnly() string {
	if n.editor == nil {
		return ""
	}
	return n.editor.ReadOnly
}

// Limit is the largest registry the node writes or reads, in bytes.
// It is set at start and never changes, so reading it takes no lock.
func (n *Node) Limit() int64 {
	if n.editor != nil {
		return n.editor.MaxRegistryBytes
	}
	return n.file.Limit
}

// LogPath is the audit log the node records changes in.
func (n *Node) LogPath() string {
	if n.editor != nil {
		return n.editor.AuditLog
	}
	return n.file.LogPath
}

// Changed is what a change did.
type Changed struct {
	// Old is what was served (or read from the file) before; New what is
	// served (or written) now.
	Old, New store.Served
	// Head is the audit log entry that records the change; zero when
	// nothing recorded it (a command without the curator key).
	Head auditlog.Head
}

// change is the one path of every change: it reads the registry (the
// served one, or the file's), applies edit through the store, and
// publishes the result. The caller holds n.mu. The log entry says what
// the change was (o.detail, or o.describe once edit has run) whichever
// node makes it; the options only a command's change takes (keepVersion,
// needKey) are ignored by a server's, which always raises the version
// and, once signed, refuses any change without the key.
func (n *Node) change(actor string, action gen.AuditAction, slug string, o fileOptions, edit store.Edit) (*Changed, error) {
	describe := o.describe
	if describe == nil && o.detail != "" {
		describe = func() string { return o.detail }
	}
	if n.editor != nil {
		old := n.serving.Current()
		next, head, err := n.editor.Change(old, actor, action, slug, describe, edit)
		if err != nil {
			return nil, err
		}
		n.serving.Publish(next)
		return &Changed{Old: old, New: next, Head: head}, nil
	}
	reg, err := n.read(o.needKey)
	if err != nil {
		return nil, err
	}
	f := *n.file
	f.Actor, f.Describe = actor, describe
	done, err := f.ChangeCategory(reg, action, slug, o.keepVersion, edit)
	if err != nil {
		return nil, err
	}
	// With the key the store signed what it wrote; without, the file is
	// left unsigned for the curator to sign.
	next := store.Served{Registry: done.Next, Modified: n.now()}
	next.Signature.Verified = f.Key != nil
	return &Changed{Old: store.Served{Registry: reg}, New: next, Head: done.Head}, nil
}

// fileOptions are what a command's change takes beyond a server's.
type fileOptions struct {
	// detail says in the log entry what the change was; describe, when
	// set, says it once the edit has run.
	detail   string
	describe func() string
	// keepVersion leaves the version as it is (endorse --keep-version).
	keepVersion bool
	// needKey refuses the change without the curator key when the
	// registry names one (a *store.KeyNeededError).
	needKey bool
}

// ErrNoProposals is a decision on a node that takes no proposals.
var ErrNoProposals = errors.New("this node takes no proposals")

// Editor is a server node's editor, for its configuration (path, key,
// limits, clock), which tests and the adapters read; nil for a command's
// node. Its changes go through the node, never directly.
func (n *Node) Editor() *store.Editor { return n.editor }

// path is the registry file the node changes.
func (n *Node) path() string {
	if n.editor != nil {
		return n.editor.Path
	}
	return n.file.Path
}

// actor is who a command's change is recorded as: its File's Actor, or
// the store's default.
func (n *Node) actor() string {
	if n.file != nil && n.file.Actor != "" {
		return n.file.Actor
	}
	return store.Actor
}
