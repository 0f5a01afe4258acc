package store

import (
	"time"

	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// Served is the registry as it is served right now, with its signature
// check: what the tools answer from and the HTTP endpoints /registry and
// /health hand out.
type Served struct {
	Registry  *registry.Registry
	Signature signature.Status
	// Modified is when these bytes became the registry; zero when unknown.
	Modified time.Time
}
