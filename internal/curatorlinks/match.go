// Package curatorlinks checks the links a curator claims (curator.links in a
// registry): a link is verified when the page at it holds the curator's
// exact key, or, for a bare origin such as https://example.org, when
// https://example.org/.well-known/3gs.json is {"pubkey": "pk:…"}
// (schema/identityproof.schema.json).
//
// Every page is fetched through internal/fetch (its address policy, its
// same-origin redirects, identity bodies, the byte budget), with a bound
// on the body and on the time. A Checker does it in the background for
// every curator whose links are claimed, again every refresh interval,
// sooner and then less often after a failure (Backoff), and keeps what
// it found in a cache file (schema/identitycache.schema.json), written
// atomically and never through a symbolic link, so a restart neither
// forgets nor fetches everything at once. Nothing here blocks a server's
// start: until a link is checked it is pending.
//
// A verified link shows that whoever controls that page published the
// key. It says nothing of who that is.
package curatorlinks

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/three-good-sources/3gs/internal/signature"
)

// Contains reports whether body holds key as a whole word: the exact
// bytes, with no letter, digit or underscore just before or just after,
// so that a longer token that merely starts (or ends) with the key does
// not count. It is the rule of grep -Fw, which CheckCommand prints.
func Contains(body []byte, key string) bool {
	k := []byte(key)
	if len(k) == 0 {
		return false
	}
	for from := 0; from+len(k) <= len(body); {
		i := bytes.Index(body[from:], k)
		if i < 0 {
			return false
		}
		at := from + i
		end := at + len(k)
		if (at == 0 || !wordByte(body[at-1])) && (end == len(body) || !wordByte(body[end])) {
			return true
		}
		from = at + 1
	}
	return false
}

// wordByte reports the bytes grep -w counts as part of a word (in the C
// locale): ASCII letters, digits and the underscore.
func wordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// BareOrigin reports whether u names a site and nothing in it: no path
// (or "/"), no query, no fragment. Such a link is proved by the site's
// /.well-known/3gs.json as well as by its front page.
func BareOrigin(u *url.URL) bool {
	return (u.Path == "" || u.Path == "/") && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" && u.Opaque == ""
}

// ProofURL is the /.well-known/3gs.json of the origin u names.
func ProofURL(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/.well-known/3gs.json"}).String()
}

// CheckCommand is a shell command that checks link by hand as Verify
// does: it prints a line when the link proves key, nothing when not. A
// page must answer 200 (curl -f) and hold the key as a word (grep -Fw); a
// bare origin's /.well-known/3gs.json must be {"pubkey": key} and nothing
// else, whatever its spacing, or else its front page hold the key.
// (Verify also follows a redirect within the origin, which curl without
// -L does not.)
func CheckCommand(link, key string) string {
	page := "curl -sf " + quote(link) + " | grep -Fw " + quote(key)
	if u, err := url.Parse(link); err == nil && BareOrigin(u) {
		return "curl -sf " + quote(ProofURL(u)) + ` | tr -d ' \t\r\n' | grep -Fx ` + quote(`{"pubkey":"`+key+`"}`) + " || " + page
	}
	return page
}

// quote is s as one shell word, always in single quotes: a URL may hold
// &, ? or ; that a shell would act on.
func quote(s string) string {
	q := signature.ShellQuote(s)
	if !strings.HasPrefix(q, "'") {
		q = "'" + q + "'"
	}
	return q
}
