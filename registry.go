package threegs

import _ "embed"

// DefaultRegistry is registry.json as of the build: what 3gs serves when no
// --registry is given, so the binary works with no set-up.
//
//go:embed registry.json
var DefaultRegistry []byte

// DefaultSignature is registry.json.sig as of the build: the curator's
// Ed25519 signature over DefaultRegistry's exact bytes (see 3gs verify).
//
//go:embed registry.json.sig
var DefaultSignature []byte
