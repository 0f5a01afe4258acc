package cli

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// A vote names the curator key of the node it is for, and that key is
// what the node answers in get_proposal. Any node can answer with
// another node's key and pass the signed vote on to it, so the voter
// says beforehand which key the node at --node must have: the one their
// own registry endorses under that URL, or --node-pubkey. Nothing is
// signed unless the node answers with it.

// expectedNodeKey is the curator key the voter means the node at node to
// have, and where that came from, for messages: --node-pubkey when given,
// else the endorsement of that URL in the voter's registry (--registry).
func expectedNodeKey(o *proposalsVoteOptions, f *Flags, node string) (key, from string, err error) {
	if o.nodePubkey != "" {
		pub, err := curatorkey.ParsePublicKey(o.nodePubkey)
		if err != nil {
			return "", "", fmt.Errorf("--node-pubkey: %v; give the node's curator key as pk: and 52 characters, as its curator told you", err)
		}
		return curatorkey.URI(pub), "--node-pubkey", nil
	}
	reg := o.own.registry
	if reg == "" {
		return "", "", fmt.Errorf("nothing signed: a vote is bound to the node's curator key, and the node's own answer cannot be trusted for it (any node can answer with another's key and pass your vote on). Say which key you mean: --registry YOUR_REGISTRY (or REGISTRY_PATH), whose endorsement of %s names it, or --node-pubkey KEY", node)
	}
	limit, err := registryLimit(o.own.maxRegistry)
	if err != nil {
		return "", "", err
	}
	r, err := registry.LoadFileLimit(reg, limit)
	if err != nil {
		problem, fix := registryProblem(reg, err, "")
		return "", "", fmt.Errorf("nothing signed: your registry (--registry): %s\nFix: %s", problem, fix)
	}
	want, err := canonicalNodeURL(node)
	if err != nil {
		return "", "", err
	}
	for _, e := range r.Endorsements() {
		if got, err := canonicalNodeURL(e.URL); err == nil && got == want {
			return e.Pubkey, "the endorsement of " + e.URL + " in " + reg, nil
		}
	}
	return "", "", fmt.Errorf("nothing signed: %s endorses no curator at %s (matched by scheme, host, port and path), so it does not say which key that node must have. Endorse the node's curator there once you have their key from them (3gs endorse --registry %s --pubkey KEY --url %s --key-file YOUR_KEY), or give --node-pubkey KEY", reg, node, signature.ShellQuote(reg), node)
}

// canonicalNodeURL is a node's URL as scheme://host:port/path, so that
// two spellings of one node compare equal: the scheme and host in lower
// case, an IP address in its one form, no trailing dot on a name, the
// port written out, and no trailing slash or /mcp (the endpoint) on the
// path. The query, the fragment and any user information are no part of
// which node it is.
func canonicalNodeURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" {
		return "", fmt.Errorf("%q is not an http(s) URL of a node; write it as http(s)://host[:port]", raw)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.Unmap().String()
	}
	path := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/mcp")
	return u.Scheme + "://" + net.JoinHostPort(host, fetch.Port(u)) + strings.TrimSuffix(path, "/"), nil
}
