// Package peer reads the registries of the curators ours endorses, and
// trusts nothing they send until it has checked it.
//
// A peer's registry is accepted only when its signature verifies against
// the key endorsed in our own signed registry (never a key the peer's
// files name), its curator is that key, it passes the same strict
// validation as a local registry, its signature has not expired (a copy
// past its expiry is what a freeze attack replays), its version is not
// older than the copy accepted before, and, once a copy's signature named
// a head of its curator's audit log, every later copy's log extends that
// head (a log rolled back or forked is refused). Accepted copies are kept on disk and checked again
// whenever they are read back, so a restart serves peers at once, even
// while they are down, without taking the cache's word for anything.
//
// The key is a peer's identity; its URL is only where to look.
package peer

import (
	"fmt"
	"net/url"
	"strings"
)

// Locate returns where the registry an endorsement's url names and its
// signature are. This is the one rule for reading a remote registry:
//
//   - a node URL, http(s)://host[:port] with no path or "/": the
//     registry 3gs serve --http publishes, {url}/registry, and its
//     signature, {url}/registry.sig;
//   - any other URL is the registry document itself, and its signature
//     is at the same URL plus ".sig"; except a node's MCP endpoint
//     (path /mcp), refused with the node URL to give instead.
//
// The registry's audit log is found by the same rule (LocateLog).
//
// Only http and https are read; a URL with user information, a query or
// a fragment is refused, since each makes the same endorsement mean
// different documents to different readers.
func Locate(raw string) (registryURL, signatureURL string, err error) {
	at, node, err := where(raw)
	switch {
	case err != nil:
		return "", "", err
	case node:
		return at + "/registry", at + "/registry.sig", nil
	}
	return at, at + ".sig", nil
}

// LocateLog returns where the audit log of the registry at raw is
// published, by the same rule as Locate: a node serves it in pages at
// {url}/audit (paged: ask with ?since=N and follow Audit-Next); beside a
// registry document it is one file, the document's URL plus
// ".audit.jsonl", read whole.
func LocateLog(raw string) (logURL string, paged bool, err error) {
	at, node, err := where(raw)
	switch {
	case err != nil:
		return "", false, err
	case node:
		return at + "/audit", true, nil
	}
	return at + ".audit.jsonl", false, nil
}

// where checks raw and returns either a node's base URL (node set) or the
// registry document's URL.
func where(raw string) (at string, node bool, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false, fmt.Errorf("url %q is not a URL: %v", raw, strings.TrimPrefix(err.Error(), "parse "+fmt.Sprintf("%q", raw)+": "))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", false, fmt.Errorf("url %q must start with http:// or https://", raw)
	case u.Host == "" || u.Hostname() == "":
		return "", false, fmt.Errorf("url %q has no host", raw)
	case u.User != nil:
		return "", false, fmt.Errorf("url %q has user information before its host; write the host alone", raw)
	case u.RawQuery != "" || u.ForceQuery:
		return "", false, fmt.Errorf("url %q has a query; name the registry document itself, or the node as http(s)://host[:port]", raw)
	case u.Fragment != "":
		return "", false, fmt.Errorf("url %q has a fragment; remove the part from #", raw)
	}
	switch strings.TrimSuffix(u.Path, "/") {
	case "":
		return u.Scheme + "://" + u.Host, true, nil
	case "/mcp":
		// What an MCP host is configured with; read as a registry
		// document, it fails later as "HTTP 405".
		return "", false, fmt.Errorf("url %q is a node's MCP endpoint, not its registry; name the node itself: %s://%s", raw, u.Scheme, u.Host)
	}
	return u.String(), false, nil
}
