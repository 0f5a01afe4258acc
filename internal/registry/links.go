package registry

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// checkLinks applies the rules of curator.links beyond the schema: each
// a URL as a source's is (no user information, no hidden character, a
// host), https, and listed once. A link is fetched to be checked
// (internal/curatorlinks), and what it proves is only as good as the channel
// it is read over: plain http is refused, but for a loopback IP literal,
// where nothing crosses a network (a test site on this machine; validate
// still warns about it). warn receives each link's parsed URL for the
// host warnings sources get.
func checkLinks(links []string, fail func(path, reason string), warn func(path string, u *url.URL)) {
	seen := map[string]int{}
	for i, l := range links {
		p := "curator.links[" + strconv.Itoa(i) + "]"
		u := checkURL(p, l, fail)
		if u == nil {
			continue
		}
		if strings.EqualFold(u.Scheme, "http") && !loopbackLiteral(u.Hostname()) {
			fail(p, "is http: a link is fetched to check that it holds the curator's key, and over plain http anyone on the way could add the key to the page; write https://"+strings.TrimPrefix(l, u.Scheme+"://"))
			continue
		}
		key := urlKey(u)
		if j, dup := seen[key]; dup {
			fail(p, fmt.Sprintf("same link as curator.links[%d]; list each link once", j))
			continue
		}
		seen[key] = i
		warn(p, u)
	}
}

// loopbackLiteral reports a host that is a loopback IP address as
// written, not a name that might resolve to one.
func loopbackLiteral(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
