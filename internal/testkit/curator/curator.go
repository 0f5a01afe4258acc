// Package curator makes curator nodes for tests: a fresh key and its key
// file in a directory of its own, a registry signed by it with or without
// an audit log, and a small frozen registry independent of the shipped
// one. It is apart from internal/testkit, which imports only the standard
// library, because it builds on internal/store, internal/signature and the
// generated types, whose own tests use testkit. Imported by tests only.
package curator

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
)

// Node is a curator's node in a directory of its own: a fresh key, its
// key file, and the paths of its registry and audit log.
type Node struct {
	Dir      string
	KeyFile  string // curator.key
	Registry string // registry.json
	Log      string // registry.json.audit.jsonl
	Key      ed25519.PrivateKey
	Pub      string // the key as a pk: URI
}

// New makes a key and writes its key file in a new directory, named
// name under the test's temporary directory (or the temporary directory
// itself when name is ""). It writes no registry.
func New(t testing.TB, name string) *Node {
	t.Helper()
	key, err := curatorkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := &Node{Dir: dir, KeyFile: filepath.Join(dir, "curator.key"), Registry: filepath.Join(dir, "registry.json"), Key: key, Pub: curatorkey.URI(curatorkey.Public(key))}
	n.Log = n.Registry + ".audit.jsonl"
	if err := curatorkey.WriteKeyFile(n.KeyFile, key); err != nil {
		t.Fatal(err)
	}
	return n
}

// Signed is a node whose registry is Doc, written as 3gs init writes
// one: signed for a year, its audit log holding the start entry the
// signature names.
func Signed(t testing.TB) *Node {
	t.Helper()
	n := New(t, "")
	doc := Doc()
	doc.Curator.Pubkey = n.Pub
	if _, err := store.Init(n.Registry, n.Log, gen.EncodeRegistry(&doc), n.Key, time.Now(), 365*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	return n
}

// Write writes doc as this curator's registry, naming the node's key as
// its curator's and signed by it (expiring after
// signature.DefaultValidity, covering no audit log), and returns the
// bytes written.
func (n *Node) Write(t testing.TB, doc gen.Registry) []byte {
	t.Helper()
	doc.Curator.Pubkey = n.Pub
	data := gen.EncodeRegistry(&doc)
	if _, err := signature.WriteSigned(n.Registry, data, n.Key, time.Now(), 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

// Basic is the document of the frozen registry Basic (internal/frozen),
// for the end-to-end tests that serve a registry of several categories: a
// change of the shipped registry.json changes nothing they see.
func Basic(t testing.TB) gen.Registry {
	t.Helper()
	reg, err := registry.Load(frozen.Registry(frozen.Basic))
	if err != nil {
		t.Fatal(err)
	}
	return reg.Document()
}

// Doc is a small valid registry with one category, independent of the
// shipped one, so a change of registry.json changes no test that uses it.
func Doc() gen.Registry {
	src := func(rank int, name, url string) gen.Source {
		return gen.Source{Rank: rank, Name: name, URL: url, Type: gen.SourceTypeDocumentation, Why: "A test source that explains the topic well enough for this test to use it."}
	}
	return gen.Registry{
		Version: "1.0.0", Updated: "2026-01-01",
		Curator:      gen.Curator{Name: "Test curator"},
		Endorsements: []gen.Endorsement{},
		Categories: map[string]gen.Category{
			"testing-things": {
				Name: "Testing things", Description: "A category made for tests, describing nothing in particular at some length.",
				QueryPatterns: []string{"how to test things", "testing basics", "unit tests for beginners"},
				Sources: []gen.Source{
					src(1, "One", "https://one.example/"), src(2, "Two", "https://two.example/"), src(3, "Three", "https://three.example/"),
				},
			},
		},
	}
}
