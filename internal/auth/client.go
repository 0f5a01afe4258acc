package auth

import "context"

// Client is who sent a request, as far as the transport can tell: the
// address it came from and its session, for bounds kept per client (the
// proposal rate). Behind a reverse proxy every request comes from the
// proxy's address, so a per-address bound is shared by all its clients.
type Client struct {
	// Addr is the peer address without its port; empty on stdio.
	Addr string
	// Session is the MCP session id, when the request named one.
	Session string
}

type clientKey struct{}

// WithClient returns ctx carrying c.
func WithClient(ctx context.Context, c Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// ClientFrom returns the client ctx carries; the zero Client (a stdio
// caller, whose process is its one client) when none.
func ClientFrom(ctx context.Context) Client {
	c, _ := ctx.Value(clientKey{}).(Client)
	return c
}

type urlKey struct{}

// WithBaseURL returns ctx for a request that arrived over HTTP from a client
// that reaches the registry at base/registry: get_provenance then tells it
// to download the files rather than naming paths on the server.
func WithBaseURL(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, urlKey{}, base)
}

// BaseURL is the base URL WithBaseURL set, if any.
func BaseURL(ctx context.Context) (string, bool) {
	base, ok := ctx.Value(urlKey{}).(string)
	return base, ok
}
