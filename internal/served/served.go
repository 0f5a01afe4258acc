// Package served names what the server is serving right now, for the
// code that hands it out by other means than a tool call (the HTTP
// endpoints /registry and /health) and the tools, without either
// importing the other.
package served

import (
	"context"
	"time"

	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// Registry is the registry as it is served right now, with its signature
// check.
type Registry struct {
	Registry  *registry.Registry
	Signature signature.Status
	// Modified is when these bytes became the registry; zero when unknown.
	Modified time.Time
}

type urlKey struct{}

// WithURL returns ctx for a request that arrived over HTTP from a client
// that reaches the registry at base/registry: get_provenance then tells it
// to download the files rather than naming paths on the server.
func WithURL(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, urlKey{}, base)
}

// URL is the base URL WithURL set, if any.
func URL(ctx context.Context) (string, bool) {
	base, ok := ctx.Value(urlKey{}).(string)
	return base, ok
}
