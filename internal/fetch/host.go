package fetch

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// A host is judged in one place, CheckHost, whoever asks: the registry's
// warnings and the proposals they refuse, the check before a fetch that
// no operator asked for, a redirect's Location, and (on the resolved
// address, through addrConcern) every connection. Two checks that could
// disagree would let a host through the laxer one, and the spellings of
// an address are many: 2130706433, 0x7f000001, 0177.0.0.1 and 127.1 are
// all 127.0.0.1 to inet_aton, to browsers (the WHATWG URL standard) and
// to many resolvers, and ::ffff:7f00:1 connects there too.

// HostError is a host that is not public: Reason says what it is, and
// Canonical is the address or name it was read as.
type HostError struct {
	// Host is the host as written.
	Host string
	// Canonical is Host lower-cased without a trailing dot, an IP
	// address in its usual form; "" when Host is not a valid host.
	Canonical string
	// Reason says what the host is, as "loopback (127.0.0.0/8)".
	Reason string
}

func (e *HostError) Error() string {
	return e.Subject() + " is " + e.Reason + ", not a public host"
}

// Subject names the host for a message: as written, and as read when
// that differs ("the host 2130706433 (the address 127.0.0.1)").
func (e *HostError) Subject() string {
	s := "the host " + e.Host
	switch {
	case e.Canonical == "" || e.Canonical == e.Host:
	case isAddr(e.Canonical):
		s += " (the address " + e.Canonical + ")"
	default:
		s += " (the name " + e.Canonical + ")"
	}
	return s
}

// ascii reports whether s is all ASCII.
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isAddr(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// CheckHost reads host, a URL's host (as url.URL.Hostname gives it, or
// in brackets), the way a resolver or browser could, and says whether it
// is public: it returns the canonical form (lower case, no trailing dot,
// an IP address in its usual form), and a *HostError when the host is an
// address outside the public Internet (every IANA special-purpose range
// that is not globally reachable, multicast, reserved space), one that
// carries an IPv4 address that is (IPv4-mapped, NAT64, 6to4), a name
// only a local network resolves (one label, localhost, .local,
// .internal, .home.arpa and the like), or not a valid host at all.
func CheckHost(host string) (string, error) {
	canon, addr, why := canonicalHost(host)
	if why == "" {
		if addr.IsValid() {
			why = addrConcern(addr)
		} else {
			why = nameConcern(canon)
		}
	}
	if why != "" {
		return canon, &HostError{Host: host, Canonical: canon, Reason: why}
	}
	return canon, nil
}

// canonicalHost is host lower-cased, without brackets or one trailing
// dot, with the address it names (any inet_aton spelling of IPv4, or an
// IPv6 literal), and why it is not a valid host ("" when it is).
func canonicalHost(host string) (string, netip.Addr, string) {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if !ascii(h) {
		// Go's HTTP client maps a host that is not ASCII by UTS 46 before
		// it dials (full-width and circled digits become digits, U+3002
		// a dot), so 127.0.0.１ connects to 127.0.0.1: read it the same
		// way, with the same library, or it would pass here as a name.
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return h, netip.Addr{}, "not a valid internationalised host name (" + err.Error() + ")"
		}
		h = a
	}
	if strings.Contains(h, ":") {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return h, netip.Addr{}, "not a valid IPv6 address"
		}
		if a.Zone() != "" {
			return a.String(), a, "an address with a zone (%" + a.Zone() + "), which names a network interface of this machine"
		}
		return a.String(), a, ""
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || strings.HasSuffix(h, ".") || strings.Contains(h, "..") {
		return h, netip.Addr{}, "not a valid host name (an empty label)"
	}
	if !endsInNumber(h) {
		return h, netip.Addr{}, ""
	}
	a, ok := parseIPv4(h)
	if !ok {
		return h, netip.Addr{}, "not a valid IPv4 address (its last label is a number, so it is read as one)"
	}
	return a.String(), a, ""
}

// endsInNumber reports whether the last label of h is a number, decimal
// or 0x hexadecimal: then h is an IPv4 address or nothing (WHATWG URL).
func endsInNumber(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// parseIPv4 reads h as inet_aton does: one to four parts, each decimal,
// octal (a leading 0) or hexadecimal (0x); the last part fills the bytes
// the others leave, so 127.1 is 127.0.0.1 and 2130706433 is too.
func parseIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := ipv4Part(p)
		last := i == len(parts)-1
		if !ok || (!last && n > 255) || (last && n >= 1<<(8*(5-len(parts)))) {
			return netip.Addr{}, false
		}
		if last {
			v = v<<(8*(5-len(parts))) | n
		} else {
			v = v<<8 | n
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// ipv4Part is one part of an inet_aton address.
func ipv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case strings.HasPrefix(p, "0x"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil
}

// localSuffixes are the names only this machine or its own network
// resolves: localhost (RFC 6761), multicast DNS's .local, the private-use
// .internal and .home.arpa, and the suffixes home and office routers hand
// out. The names RFC 2606 and 6761 reserve for tests and examples (.test,
// .example, .invalid) resolve nowhere on the public Internet; should a
// local resolver answer for one, the address is judged when connecting.
var localSuffixes = map[string]bool{
	"localhost": true, "local": true, "localdomain": true, "internal": true, "intranet": true,
	"lan": true, "home": true, "corp": true,
}

// nameConcern says why the host name h (canonical) is not public, "" when
// it may be.
func nameConcern(h string) string {
	dot := strings.LastIndexByte(h, '.')
	switch last := h[dot+1:]; {
	case localSuffixes[last]:
		return "a local name (." + last + "), which only this machine or its own network resolves"
	case h == "home.arpa" || strings.HasSuffix(h, ".home.arpa"):
		return "a local name (.home.arpa), which only this machine or its own network resolves"
	case dot < 0:
		return "a single-label name, which only a local resolver completes"
	}
	return ""
}

// special is a range of addresses that is not public, and what it is.
type special struct {
	p    netip.Prefix
	what string
}

func ranges(pairs ...string) []special {
	out := make([]special, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, special{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

// notPublic4 and notPublic6 are the ranges no fetch may connect to unless
// the operator named the address: this machine, the networks it sits on,
// and the ranges the IANA special-purpose registries (RFC 6890) mark not
// globally reachable, with multicast and reserved space. A peer that
// could point us at them (through its registry, its DNS name, a rebinding
// or a redirect) could make us probe or read services only we can reach.
// The more specific range of two comes first, for the message.
var notPublic4 = ranges(
	"0.0.0.0/8", "\"this network\"",
	"10.0.0.0/8", "private (RFC 1918)",
	"100.64.0.0/10", "shared address space (carrier-grade NAT, RFC 6598)",
	"127.0.0.0/8", "loopback",
	"169.254.0.0/16", "link-local (where cloud metadata services answer)",
	"172.16.0.0/12", "private (RFC 1918)",
	"192.0.0.0/24", "IETF protocol assignments",
	"192.0.2.0/24", "documentation (TEST-NET-1)",
	"192.88.99.0/24", "the deprecated 6to4 relay anycast",
	"192.168.0.0/16", "private (RFC 1918)",
	"198.18.0.0/15", "benchmarking",
	"198.51.100.0/24", "documentation (TEST-NET-2)",
	"203.0.113.0/24", "documentation (TEST-NET-3)",
	"224.0.0.0/4", "multicast",
	"255.255.255.255/32", "the broadcast address",
	"240.0.0.0/4", "reserved",
)

var notPublic6 = ranges(
	"::/128", "the unspecified address",
	"::1/128", "loopback",
	"::/96", "IPv4-compatible (deprecated)",
	"64:ff9b:1::/48", "local-use IPv4/IPv6 translation",
	"100::/64", "discard-only",
	"100:0:0:1::/64", "the dummy IPv6 prefix",
	"2001::/32", "Teredo, which reaches an IPv4 address through a relay",
	"2001:2::/48", "benchmarking",
	"2001:10::/28", "ORCHID (deprecated)",
	"2001::/23", "IETF protocol assignments",
	"2001:db8::/32", "documentation",
	"3fff::/20", "documentation",
	"5f00::/16", "SRv6 segment identifiers",
	"fc00::/7", "unique local (private)",
	"fe80::/10", "link-local",
	"fec0::/10", "site-local (deprecated)",
	"ff00::/8", "multicast",
)

// nat64, sixToFour and globalUnicast place an IPv6 address: the first two
// carry an IPv4 address, judged as that address; outside the last, IANA
// has allocated nothing public.
var (
	nat64         = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour     = netip.MustParsePrefix("2002::/16")
	globalUnicast = netip.MustParsePrefix("2000::/3")
)

// addrConcern says why a is not a public address, "" when it is. An IPv4
// address inside an IPv6 one (mapped, NAT64, 6to4) is judged as that
// IPv4 address, which is where a connection to it ends up.
func addrConcern(a netip.Addr) string {
	a = a.WithZone("")
	if a.Is4In6() {
		if why := addrConcern(a.Unmap()); why != "" {
			return "the IPv4-mapped form of " + a.Unmap().String() + ", " + why
		}
		return ""
	}
	if a.Is4() {
		for _, r := range notPublic4 {
			if r.p.Contains(a) {
				return r.what + " (" + r.p.String() + ")"
			}
		}
		return ""
	}
	if !a.Is6() {
		return "not an IP address"
	}
	b := a.As16()
	var inner netip.Addr
	var via string
	switch {
	case nat64.Contains(a):
		inner, via = netip.AddrFrom4([4]byte(b[12:16])), "NAT64"
	case sixToFour.Contains(a):
		inner, via = netip.AddrFrom4([4]byte(b[2:6])), "6to4"
	}
	if inner.IsValid() {
		if why := addrConcern(inner); why != "" {
			return "the " + via + " form of " + inner.String() + ", " + why
		}
		return ""
	}
	for _, r := range notPublic6 {
		if r.p.Contains(a) {
			return r.what + " (" + r.p.String() + ")"
		}
	}
	if !globalUnicast.Contains(a) {
		return "outside global unicast (2000::/3), space IANA keeps reserved"
	}
	return ""
}

// OperatorHostError is a URL the operator typed (a flag such as --follow
// or --node) whose host is a name only a local network resolves: its
// address could be reached only if the URL named it as a literal IP.
type OperatorHostError struct {
	URL, Host, Reason string
	// Instead is the URL to write, when the name's address is known
	// (localhost is 127.0.0.1); otherwise "".
	Instead string
}

func (e *OperatorHostError) Error() string {
	fix := "write the IP address " + e.Host + " has on your network in its place"
	if e.Instead != "" {
		fix = "write the address itself: " + e.Instead
	}
	return fmt.Sprintf("%s names %s, %s: an address outside the public Internet (loopback, private) is reached only when the URL you give names it as a literal IP, never through a name, which anything that answers for the name could point anywhere\nFix: %s", e.URL, e.Host, e.Reason, fix)
}

// CheckOperatorURL is the one rule for a node URL the operator types
// (serve --follow, proposals vote --node): a public host passes, and so
// does any address written as a literal IP, private or loopback
// included (the operator's choice, Request.Operator); a name CheckHost
// refuses (localhost, .local, a single label) is refused with an
// *OperatorHostError naming the rule and the URL to write instead, since
// the connection to the address it resolves to would be refused anyway.
func CheckOperatorURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return nil // the caller's own parsing says what is wrong
	}
	host := u.Hostname()
	if _, ok := literalIP(host); ok {
		return nil
	}
	canon, err := CheckHost(host)
	var he *HostError
	if !errors.As(err, &he) {
		return nil
	}
	e := &OperatorHostError{URL: raw, Host: host, Reason: he.Reason}
	// Another spelling of an address (127.1, 0x7f000001) is that address;
	// localhost is loopback.
	instead := ""
	if a, ok := literalIP(canon); ok {
		instead = a.String()
	} else if canon == "localhost" || strings.HasSuffix(canon, ".localhost") {
		instead = "127.0.0.1"
	}
	if instead != "" {
		v := *u
		v.Host = instead
		if strings.Contains(instead, ":") {
			v.Host = "[" + instead + "]"
		}
		if p := u.Port(); p != "" {
			v.Host = net.JoinHostPort(instead, p)
		}
		e.Instead = v.String()
	}
	return e
}
