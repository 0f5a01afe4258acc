package fetch

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Every spelling of a non-public host that a resolver, inet_aton or a
// browser reads as one is refused, with the canonical form named; public
// hosts pass in their canonical form.
func TestCheckHost(t *testing.T) {
	for _, c := range []struct {
		host, canonical, reason string // reason: a word the refusal must hold; "" for public
	}{
		// IPv4 in every inet_aton form.
		{"2130706433", "127.0.0.1", "loopback"},
		// Digits and dots that are not ASCII, which Go's HTTP client maps
		// (UTS 46) before it dials.
		{"127.0.0.１", "127.0.0.1", "loopback"},
		{"169.254.169.25４", "169.254.169.254", "link-local"},
		{"10.0.0.①", "10.0.0.1", "private"},
		{"127。0。0。1", "127.0.0.1", "loopback"},
		{"ｌｏｃａｌｈｏｓｔ", "localhost", "local name"},
		{"0x7f000001", "127.0.0.1", "loopback"},
		{"0X7F000001", "127.0.0.1", "loopback"},
		{"0177.0.0.1", "127.0.0.1", "loopback"},
		{"127.1", "127.0.0.1", "loopback"},
		{"127.0.1", "127.0.0.1", "loopback"},
		{"0x7f.1", "127.0.0.1", "loopback"},
		{"0177.0x0.1", "127.0.0.1", "loopback"},
		{"017700000001", "127.0.0.1", "loopback"},
		{"0", "0.0.0.0", "this network"},
		{"0x", "0.0.0.0", "this network"},
		{"127.0.0.1.", "127.0.0.1", "loopback"},
		{"169.254.169.254.", "169.254.169.254", "link-local"},
		{"0251.0376.0251.0376", "169.254.169.254", "link-local"},
		{"100.64.0.1", "100.64.0.1", "carrier-grade"},
		{"10.1.2.3", "10.1.2.3", "private"},
		{"172.31.255.255", "172.31.255.255", "private"},
		{"192.168.0.1", "192.168.0.1", "private"},
		{"192.0.0.8", "192.0.0.8", "IETF protocol assignments"},
		{"192.0.0.170", "192.0.0.170", "IETF protocol assignments"},
		{"192.0.2.1", "192.0.2.1", "documentation"},
		{"198.18.0.1", "198.18.0.1", "benchmarking"},
		{"198.19.255.255", "198.19.255.255", "benchmarking"},
		{"198.51.100.7", "198.51.100.7", "documentation"},
		{"203.0.113.9", "203.0.113.9", "documentation"},
		{"192.88.99.1", "192.88.99.1", "6to4 relay"},
		{"224.0.0.1", "224.0.0.1", "multicast"},
		{"240.0.0.1", "240.0.0.1", "reserved"},
		{"255.255.255.255", "255.255.255.255", "broadcast"},
		{"4294967295", "255.255.255.255", "broadcast"},
		// Not addresses at all, though their last label is a number.
		{"4294967296", "4294967296", "not a valid IPv4"},
		{"1.2.3.4.5", "1.2.3.4.5", "not a valid IPv4"},
		{"256.1.1.1", "256.1.1.1", "not a valid IPv4"},
		{"08.0.0.1", "08.0.0.1", "not a valid IPv4"},
		{"example.123", "example.123", "not a valid IPv4"},
		{"a..b", "a..b", "empty label"},
		{"", "", "empty label"},
		// IPv6 literals, with brackets or without.
		{"[::1]", "::1", "loopback"},
		{"::", "::", "unspecified"},
		{"[::ffff:127.0.0.1]", "::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1"},
		{"::ffff:7f00:1", "::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1"},
		{"::ffff:a9fe:a9fe", "::ffff:169.254.169.254", "link-local"},
		{"::127.0.0.1", "::7f00:1", "IPv4-compatible"},
		{"[64:ff9b::7f00:1]", "64:ff9b::7f00:1", "NAT64 form of 127.0.0.1"},
		{"64:ff9b::a00:1", "64:ff9b::a00:1", "NAT64 form of 10.0.0.1"},
		{"64:ff9b:1::8.8.8.8", "64:ff9b:1::808:808", "local-use"},
		{"[2002:7f00:1::]", "2002:7f00:1::", "6to4 form of 127.0.0.1"},
		{"2002:a9fe:a9fe::1", "2002:a9fe:a9fe::1", "6to4 form of 169.254.169.254"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"},
		{"2001:2::1", "2001:2::1", "benchmarking"},
		{"2001:10::1", "2001:10::1", "ORCHID"},
		{"2001:20::1", "2001:20::1", "IETF protocol assignments"},
		{"2001:db8::1", "2001:db8::1", "documentation"},
		{"3fff::1", "3fff::1", "documentation"},
		{"5f00::1", "5f00::1", "SRv6"},
		{"100::1", "100::1", "discard-only"},
		{"100:0:0:1::1", "100:0:0:1::1", "dummy"},
		{"fc00::1", "fc00::1", "unique local"},
		{"FD12:3456::1", "fd12:3456::1", "unique local"},
		{"fe80::1", "fe80::1", "link-local"},
		{"fe80::1%eth0", "fe80::1%eth0", "zone"},
		{"2606:4700::1%eth0", "2606:4700::1%eth0", "zone"},
		{"fec0::1", "fec0::1", "site-local"},
		{"ff02::1", "ff02::1", "multicast"},
		{"4000::1", "4000::1", "global unicast"},
		{"1::", "1::", "global unicast"},
		{"1::2::3", "1::2::3", "not a valid IPv6"},
		// Names only a local network resolves.
		{"intranet", "intranet", "local name"},
		{"fileserver", "fileserver", "single-label"},
		{"localhost", "localhost", "local name"},
		{"localhost.", "localhost", "local name"},
		{"LOCALHOST", "localhost", "local name"},
		{"db.localhost", "db.localhost", "local name"},
		{"printer.local", "printer.local", "local name"},
		{"metadata.google.internal", "metadata.google.internal", "local name"},
		{"nas.lan", "nas.lan", "local name"},
		{"router.home.arpa", "router.home.arpa", "local name"},
		{"box.localdomain", "box.localdomain", "local name"},
		{"wiki.corp.", "wiki.corp", "local name"},
		// Public.
		{"8.8.8.8", "8.8.8.8", ""},
		{"134744072", "8.8.8.8", ""},
		{"0x08080808", "8.8.8.8", ""},
		{"1.1.1.1.", "1.1.1.1", ""},
		{"192.31.196.1", "192.31.196.1", ""},
		{"b\u00fccher.example", "xn--bcher-kva.example", ""},
		{"2606:4700:4700::1111", "2606:4700:4700::1111", ""},
		{"[2606:4700:4700::1111]", "2606:4700:4700::1111", ""},
		{"::ffff:8.8.8.8", "::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", "64:ff9b::808:808", ""},
		{"2002:808:808::1", "2002:808:808::1", ""},
		{"docs.python.org", "docs.python.org", ""},
		{"Docs.Python.Org.", "docs.python.org", ""},
		{"example.com", "example.com", ""},
		{"docs.example", "docs.example", ""},
		{"peer.test.", "peer.test", ""},
		{"0x.example.com", "0x.example.com", ""},
		{"1.example.com", "1.example.com", ""},
		{"xn--bcher-kva.example.org", "xn--bcher-kva.example.org", ""},
	} {
		got, err := CheckHost(c.host)
		if got != c.canonical {
			t.Errorf("CheckHost(%q): canonical %q, want %q", c.host, got, c.canonical)
		}
		if c.reason == "" {
			if err != nil {
				t.Errorf("CheckHost(%q): refused a public host: %v", c.host, err)
			}
			continue
		}
		var he *HostError
		if !errors.As(err, &he) {
			t.Errorf("CheckHost(%q) = %v, want refused (%s)", c.host, err, c.reason)
			continue
		}
		if !strings.Contains(he.Reason, c.reason) {
			t.Errorf("CheckHost(%q): reason %q does not say %q", c.host, he.Reason, c.reason)
		}
		if c.canonical != "" && c.canonical != c.host && isAddr(c.canonical) && !strings.Contains(err.Error(), "(the address "+c.canonical+")") {
			t.Errorf("CheckHost(%q): %q does not name the address it is", c.host, err)
		}
	}
}

// A request no operator made, for a URL whose host CheckHost refuses, is
// refused before any connection, whatever the spelling: the server on
// loopback is never reached. The operator's request to the same literal
// is fetched.
func TestNotOperatorRefusedBeforeConnecting(t *testing.T) {
	srv, hits := countingServer(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv, "http://"))
	c := New(Options{ConnectTimeout: 2e9, HeaderTimeout: 5e9})
	for _, host := range []string{"127.0.0.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "127.0.0.1.", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "localhost", "localhost."} {
		_, err := c.Get(ctx(t), Request{URL: "http://" + host + ":" + port + "/secret", What: "source", Limit: 100})
		fe := wantPublic(t, err, RefusedAddress)
		if !fe.Refused || !strings.Contains(fe.Detail, "not a public host") {
			t.Errorf("%s: detail %q", host, fe.Detail)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server was reached %d times by requests no operator made", n)
	}
	resp, err := c.Get(ctx(t), Request{URL: srv + "/mine", What: "source", Limit: 100, Operator: true})
	if err != nil || resp.Status != 200 {
		t.Fatalf("the operator's request: %v", err)
	}
	if hits.Load() != 1 {
		t.Fatalf("the operator's request did not reach the server")
	}
	// The operator's connection is not reused for another's request.
	if _, err := c.Get(ctx(t), Request{URL: srv + "/again", What: "source", Limit: 100}); err == nil || hits.Load() != 1 {
		t.Fatalf("a request no operator made reached the server after the operator's: %v (hits %d)", err, hits.Load())
	}
}

// countingServer is a server on loopback that answers "ok" and counts
// the requests that reach it.
func countingServer(t *testing.T) (string, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

// A literal the operator wrote earns the exemption only in ASCII: the
// HTTP client maps 127.0.0.１ to 127.0.0.1 before it dials, where the
// dial would otherwise take it for the literal, so a Location or a
// registry spelled that way could reach this machine's services.
func TestOperatorExemptionOnlyForASCIILiterals(t *testing.T) {
	srv, hits := countingServer(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv, "http://"))
	c := New(Options{ConnectTimeout: 2e9, HeaderTimeout: 5e9, Operator: true})
	for _, host := range []string{"127.0.0.\uff11", "127.0.0.%EF%BC%91", "127\u30020\u30020\u30021"} {
		_, err := c.Get(ctx(t), Request{URL: "http://" + host + ":" + port + "/secret", What: "source", Limit: 100})
		wantPublic(t, err, RefusedAddress)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server was reached %d times through hosts that are not ASCII", n)
	}
}

// An operator's node URL may name any address as a literal IP, and a
// public name; a local name is refused with the rule and, when its
// address is known, the URL to write.
func TestCheckOperatorURL(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:8601", "http://10.0.0.5", "http://[::1]:8601/", "https://node.example"} {
		if err := CheckOperatorURL(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for raw, instead := range map[string]string{
		"http://localhost:8601":     "http://127.0.0.1:8601",
		"http://LocalHost./x":       "http://127.0.0.1/x",
		"http://127.1:8601":         "http://127.0.0.1:8601",
		"http://0x7f000001":         "http://127.0.0.1",
		"http://origin.lan:8601":    "",
		"http://printer.local:8601": "",
		"http://origin:8601":        "",
	} {
		var oe *OperatorHostError
		err := CheckOperatorURL(raw)
		if !errors.As(err, &oe) || oe.Instead != instead || !strings.Contains(err.Error(), "literal IP") || !strings.Contains(err.Error(), "\nFix: ") {
			t.Errorf("%s: %v, want an *OperatorHostError with Instead %q", raw, err, instead)
		}
	}
}
