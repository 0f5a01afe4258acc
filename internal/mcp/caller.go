package mcp

// Who is calling: the token a request carries, wherever it carries it.

import (
	"context"

	"github.com/bytedance/sonic"

	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
)

// tokenNotRecognised answers a call that needs a token and carried one the
// server does not accept: mistyped, revoked, or meant for another server.
const tokenNotRecognised = "Token not recognised: the token sent is not one this server accepts (mistyped, revoked, or for another server)"

// tokenHowTo is, in the error's message, how the operator of a server
// makes a token of tier and gives it to the server: a local user is its
// own operator.
func tokenHowTo(tier string) string {
	return "the server's operator makes one with 3gs token new --tier " + tier + " --name NAME --tokens FILE and starts the server with --tokens FILE"
}

// tokenHint is the error data's hint: how a token of tier is made, given
// to the server and sent with a call.
func tokenHint(tier string) string {
	return "Make a token with 3gs token new --tier " + tier + " --name NAME --tokens FILE (it prints the token once), start the server with 3gs serve --tokens FILE (THREEGS_TOKENS; or send it SIGHUP to read the file again), and send the token as the HTTP header Authorization: Bearer TOKEN, in params._meta[\"io.3gs/token\"], or, to a stdio server, in THREEGS_TOKEN."
}

// metaToken is the _meta key of a caller's token.
const metaToken = "io.3gs/token"

// caller identifies who sent a request from the first token found, in this
// order: the transport's (HTTP Authorization), params._meta's, params',
// then the session's default. The first one present decides, valid or not.
// A session made for one caller (NewSessionAs) reads no token.
func (sess *Session) caller(ctx context.Context, p *params) (auth.Caller, *jsonrpc.Error) {
	if sess.as != nil {
		return *sess.as, nil
	}
	token, found := auth.TransportToken(ctx)
	for _, src := range [...]struct {
		raw  []byte
		path string
	}{{metaTokenRaw(p), "_meta." + metaToken}, {p.Token, "token"}} {
		if found || src.raw == nil {
			continue
		}
		t, ok := jsonrpc.String(src.raw)
		if !ok {
			return auth.Caller{}, invalidParams(src.path, "must be a string")
		}
		token, found = t, true
	}
	if !found {
		token = sess.defaultToken
	}
	return sess.srv.keyring.Identify(token), nil
}

func metaTokenRaw(p *params) sonic.NoCopyRawMessage {
	if !p.hasMeta {
		return nil
	}
	return p.meta.Token
}
