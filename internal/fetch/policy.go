package fetch

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// notPublic are the address ranges no fetch may connect to unless the
// configured URL names the address itself: this machine, the networks it
// sits on, and ranges that reach no one on the public Internet. A peer
// that could point us at them (through its DNS name, a rebinding, or a
// redirect) could make us probe or read services only we can reach.
var notPublic = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // "this network"
		"10.0.0.0/8",      // RFC 1918
		"100.64.0.0/10",   // carrier-grade NAT (RFC 6598)
		"127.0.0.0/8",     // loopback
		"169.254.0.0/16",  // link-local, cloud metadata services among them
		"172.16.0.0/12",   // RFC 1918
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // TEST-NET-1
		"192.88.99.0/24",  // 6to4 relay anycast, deprecated
		"192.168.0.0/16",  // RFC 1918
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // TEST-NET-2
		"203.0.113.0/24",  // TEST-NET-3
		"224.0.0.0/4",     // multicast
		"240.0.0.0/4",     // reserved, and the broadcast address
		"::/128",          // unspecified
		"::1/128",         // loopback
		"::/96",           // IPv4-compatible, deprecated
		"64:ff9b:1::/48",  // local-use NAT64
		"100::/64",        // discard-only
		"2001::/32",       // Teredo
		"2001:db8::/32",   // documentation
		"fc00::/7",        // unique local
		"fe80::/10",       // link-local
		"fec0::/10",       // site-local, deprecated
		"ff00::/8",        // multicast
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// nat64 and sixToFour carry an IPv4 address inside an IPv6 one: the
// address is judged by the IPv4 address it reaches.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// Public reports whether a is an address on the public Internet: none of
// loopback, private (RFC 1918, unique local), link-local, multicast,
// unspecified, carrier-grade NAT, documentation or reserved ranges. An
// IPv4 address inside an IPv6 one (mapped, NAT64, 6to4) is judged as that
// IPv4 address.
func Public(a netip.Addr) bool {
	a = a.WithZone("")
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return Public(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return Public(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.IsMulticast() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// literalIP is the address host names when it is an IP literal (an IPv6
// one may carry a zone), and false for a name.
func literalIP(host string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone(""), true
}

// control is the net.Dialer Control hook for one dial to host, as the
// request's URL names it: it runs after the name has been resolved, on
// the very address about to be connected to, so no answer of a DNS
// server, however it changes between lookups, can steer a connection to
// an address the policy refuses. The address is allowed when it is
// public, or when host is that address as a literal: the operator (or
// the curator, in an endorsement) named it, so it is a choice, not
// something a peer slipped in. A redirect never changes the host (see
// checkRedirect) and no proxy is used, so the literal is always the URL's.
func control(host string) func(network, address string, _ syscall.RawConn) error {
	named, isLiteral := literalIP(host)
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &Error{Public: RefusedAddress, Refused: true, Detail: fmt.Sprintf("connecting to %s for %s: not an IP address and port", address, host)}
		}
		a := ap.Addr().WithZone("")
		if isLiteral && a.Unmap() == named.Unmap() {
			return nil
		}
		if !Public(a) {
			return &Error{Public: RefusedAddress, Refused: true, Detail: fmt.Sprintf("%s resolves to %s, which is not a public address (loopback, private, link-local, multicast or another reserved range); such an address is fetched only when the URL names it as a literal IP", host, a)}
		}
		return nil
	}
}

// dialer returns the DialContext of a transport that applies the address
// policy to every connection.
func dialer(connectTimeout time.Duration, resolver *net.Resolver) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		d := &net.Dialer{Timeout: connectTimeout, Resolver: resolver, Control: control(host)}
		return d.DialContext(ctx, network, addr)
	}
}
