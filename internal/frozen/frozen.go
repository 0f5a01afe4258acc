// Package frozen holds the registries unit and protocol tests serve
// instead of the shipped registry.json: small, written for the tests, and
// never changed when the shipped registry is. A test that asserts a
// category count, a version or an answer asserts it about a file here, so
// a curator adding a category to registry.json breaks only the tests whose
// subject is registry.json itself.
//
// Each registry is signed by TestKey, a key derived from a published
// phrase: anyone can sign with it, so nothing may trust it. Its curator
// name says so, and the tests of this package check that the 3gs binary
// links nothing that names it. It is imported by tests only, and uses the
// standard library alone, so the tests of any package may import it.
package frozen

import (
	"crypto/ed25519"
	"crypto/sha256"
	"embed"
	"fmt"
)

// The registries, by name (testdata/NAME.json, signed in
// testdata/NAME.json.sig).
const (
	// Basic is nine categories taken from the registry 3gs shipped in
	// November 2026 (Git, Go, Linux hardening, PostgreSQL, Python
	// packaging, regular expressions, Rust, self-hosted email, shell
	// scripting), version 1.1.0, updated 2026-11-21, no endorsements:
	// close topics (Rust and Go) for alternatives, distinct ones for
	// clear matches, and every slug the tool schemas' example calls name.
	Basic = "basic"
)

// BasicCategories is how many categories Basic holds.
const BasicCategories = 9

// TestKeyPhrase is what TestKey is derived from. It is published here, so
// the key signs nothing anyone should believe.
const TestKeyPhrase = "3gs TEST KEY: public, for tests only, never trusted"

// TestKey is the curator key of the frozen registries: the Ed25519 key
// whose seed is the SHA-256 of TestKeyPhrase.
func TestKey() ed25519.PrivateKey {
	seed := sha256.Sum256([]byte(TestKeyPhrase))
	return ed25519.NewKeyFromSeed(seed[:])
}

//go:embed testdata/*.json testdata/*.json.sig
var files embed.FS

// Registry returns the frozen registry name (Basic, ...), a fresh copy
// the caller may change. It panics on an unknown name: a typo in a test.
func Registry(name string) []byte { return read(name + ".json") }

// Signature returns the signature document of the registry name, made
// with TestKey in the form without expiry, as the shipped registry's is.
func Signature(name string) []byte { return read(name + ".json.sig") }

func read(file string) []byte {
	data, err := files.ReadFile("testdata/" + file)
	if err != nil {
		panic(fmt.Sprintf("frozen: no testdata/%s: %v", file, err))
	}
	return data
}
