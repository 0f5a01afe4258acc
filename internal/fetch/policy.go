package fetch

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"
)

// loopbackOnly holds a test run to this machine: in a test binary
// (testing.Testing) and in any 3gs a test starts (internal/testkit sets
// THREEGS_LOOPBACK_ONLY=1 for the processes it runs), every connection to
// an address outside 127.0.0.0/8 and ::1 that the policy would allow is
// refused when dialling, whatever a test's resolver or a registry says. A
// test that wants a "public" or "internal" address injects a resolver or
// a dialer; it never reaches one.
var loopbackOnly = testing.Testing() || os.Getenv("THREEGS_LOOPBACK_ONLY") == "1"

// Public reports whether a is an address on the public Internet: none of
// the ranges addrConcern refuses. An IPv4 address inside an IPv6 one
// (mapped, NAT64, 6to4) is judged as that IPv4 address.
func Public(a netip.Addr) bool { return addrConcern(a) == "" }

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
// public, or, for a request the operator made (operator), when host is
// that address as a literal: the operator named it in a flag or in the
// registry this node is the origin of, so it is their choice. A literal
// in anything another party wrote (a followed origin's or a peer's
// registry, a proposal, a Location) is judged like any other address. A
// redirect never changes the host (see checkRedirect) and no proxy is
// used, so the literal is always the URL's.
func control(host string, operator bool) func(network, address string, _ syscall.RawConn) error {
	named, isLiteral := literalIP(host)
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &Error{Public: RefusedAddress, Refused: true, Detail: fmt.Sprintf("connecting to %s for %s: not an IP address and port", address, host)}
		}
		a := ap.Addr().WithZone("")
		why := addrConcern(a)
		switch {
		case why == "" || operator && isLiteral && a.Unmap() == named.Unmap():
			return nil
		case isLiteral:
			return &Error{Public: RefusedAddress, Refused: true, Detail: fmt.Sprintf("%s is %s, not a public address; a URL may name such an address only when the operator gave it (a flag, or the registry of the node that is its origin), not when another party's registry, a proposal or a redirect did", host, why)}
		}
		return &Error{Public: RefusedAddress, Refused: true, Detail: fmt.Sprintf("%s resolves to %s, which is %s, not a public address; such an address is fetched only when the operator's URL names it as a literal IP", host, a, why)}
	}
}

// dialer returns the DialContext of a transport that applies the address
// policy to every connection, with the operator's exemption or without.
func dialer(connectTimeout time.Duration, resolver *net.Resolver, operator bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		d := &net.Dialer{Timeout: connectTimeout, Resolver: resolver, Control: testRunGuard(host, control(host, operator))}
		return d.DialContext(ctx, network, addr)
	}
}

// testRunGuard runs policy, then, in a test run (loopbackOnly), refuses
// whatever the policy allowed that is not loopback.
func testRunGuard(host string, policy func(network, address string, c syscall.RawConn) error) func(network, address string, c syscall.RawConn) error {
	if !loopbackOnly {
		return policy
	}
	return func(network, address string, c syscall.RawConn) error {
		if err := policy(network, address, c); err != nil {
			return err
		}
		if ap, err := netip.ParseAddrPort(address); err != nil || !ap.Addr().Unmap().IsLoopback() {
			return &Error{Public: RefusedAddress, Refused: true, Detail: fmt.Sprintf("connecting to %s for %s: a test run connects only to loopback (a test binary, or THREEGS_LOOPBACK_ONLY=1 as internal/testkit sets for what it starts)", address, host)}
		}
		return nil
	}
}
