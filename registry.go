package threegs

import _ "embed"

// DefaultRegistry is registry.json as of the build: what 3gs serves when no
// --registry is given, so the binary works with no set-up.
//
//go:embed registry.json
var DefaultRegistry []byte
