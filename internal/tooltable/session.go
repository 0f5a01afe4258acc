package tooltable

import "context"

// catalogKey is the context key of the catalog a caller's session was
// given.
type catalogKey struct{}

// WithCatalog records in ctx that the caller's session was given the
// catalog of categories of the registry named version (the server's
// instructions at initialize), so a tool may point at it rather than list
// the categories again. The MCP core sets it for the tools a session
// calls; a caller without one (a page, a stateless request) lists them.
func WithCatalog(ctx context.Context, version string) context.Context {
	return context.WithValue(ctx, catalogKey{}, version)
}

// CatalogGiven is the version WithCatalog recorded in ctx; "" when none.
func CatalogGiven(ctx context.Context) string {
	v, _ := ctx.Value(catalogKey{}).(string)
	return v
}
