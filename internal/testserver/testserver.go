// Package testserver builds the tool handlers and MCP servers that tests
// run against, so every test package serves a registry the same way that
// 3gs serve does, and a change to how a server is put together is made
// once. By default they serve the frozen test registry frozen.Basic, so
// that a change of the shipped registry.json leaves their answers alone;
// Options.Shipped serves the embedded one, Options.Stub fixed answers. It
// is imported by tests only.
package testserver

import (
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/tools"
)

// Options say what to serve. The zero value serves the frozen registry
// frozen.Basic, unsigned and read-only, at the default threshold.
type Options struct {
	// Registry is the registry document; nil means frozen.Basic, or the
	// embedded one with Shipped.
	Registry []byte
	// Shipped serves the registry embedded in the binary (registry.json),
	// for the few tests whose subject is the data 3gs ships.
	Shipped bool
	// Signed checks the registry's signature, as a server started without
	// --registry does: the test key's for frozen.Basic, the embedded one
	// with Shipped (only for those two).
	Signed bool
	// Stub serves Stubs, whose answers are fixed, in place of the real
	// tools (over the same registry, for the tools Stubs leave alone):
	// for tests of the protocol rather than of the tools.
	Stub bool
	// Editable serves a copy written to a temporary file, so the curator
	// tools can change it; its path is Server.Path.
	Editable bool
	// Keyring holds the tokens the MCP server accepts; nil accepts none.
	Keyring *auth.Keyring
	// Log receives the server's logs; nil discards them.
	Log *slog.Logger
	// Modified is the registry's modification time; zero means unknown.
	Modified time.Time
	// Federated and Proposals are mcp.Config's: what tools/list shows
	// besides the tools every node lists.
	Federated, Proposals bool
	// Catalog gives sessions the registry's catalog in their
	// instructions, as serve does for a registry within --catalog-max:
	// a not-confident answer then points there.
	Catalog bool
}

// Server is a built server.
type Server struct {
	*mcp.Server
	Handlers *tools.Handlers
	// Path is the registry file of an Editable server.
	Path string
}

// Token is one token Keyring writes: who holds it and its tier.
type Token struct {
	Name string
	Tier gen.Tier
}

// Keyring writes a token file in a temporary directory holding a token
// for each of want, and returns the tokens' secrets, in want's order, and
// the keyring read back from the file, as a server started with --tokens
// holds it.
func Keyring(t testing.TB, want ...Token) ([]string, *auth.Keyring) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens.json")
	secrets := make([]string, len(want))
	for i, w := range want {
		s, err := auth.Add(path, w.Name, w.Tier, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		secrets[i] = s
	}
	keyring, err := auth.LoadKeyring(path)
	if err != nil {
		t.Fatal(err)
	}
	return secrets, keyring
}

// Handlers builds the tool handlers for opt.
func Handlers(t testing.TB, opt Options) (*tools.Handlers, string) {
	t.Helper()
	data, sig := opt.Registry, []byte(nil)
	switch {
	case data == nil && opt.Shipped:
		data, sig = threegs.DefaultRegistry, threegs.DefaultSignature
	case data == nil:
		data, sig = frozen.Registry(frozen.Basic), frozen.Signature(frozen.Basic)
	}
	reg, err := registry.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	newMatcher := func(r *registry.Registry) matcher.Matcher { return matcher.New(r) }
	cfg := tools.Config{Registry: reg, Matcher: newMatcher(reg), Threshold: tools.DefaultThreshold, Modified: opt.Modified}
	if opt.Signed {
		cfg.Signature = signature.Check(reg, sig)
		cfg.Files = signature.Files{Builtin: true, Where: "the 3gs source tree"}
	}
	path := ""
	if opt.Editable {
		path = filepath.Join(t.TempDir(), "registry.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg.Edit = &tools.EditConfig{Path: path, AuditLog: path + ".audit.jsonl"}
	}
	return tools.New(cfg), path
}

// New builds an MCP server over the handlers for opt.
func New(t testing.TB, opt Options) *Server {
	t.Helper()
	h, path := Handlers(t, opt)
	log := opt.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var serve gen.ToolHandlers = h
	if opt.Stub {
		serve = Stubs{ToolHandlers: h}
	}
	cfg := mcp.Config{Handlers: serve, Version: "test", Log: log, Keyring: opt.Keyring, Federated: opt.Federated, Proposals: opt.Proposals}
	if v, slugs, ok := h.Catalog(math.MaxInt); opt.Catalog && ok {
		cfg.Catalog = mcp.Catalog{Version: v, Slugs: slugs}
	}
	return &Server{Server: mcp.NewServer(cfg), Handlers: h, Path: path}
}
