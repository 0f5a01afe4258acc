package fetch

import (
	"net"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// A name whose DNS answer is a loopback, private or link-local address
// is refused when connecting, before any packet goes there: the check is
// on the address the dial is about to use, whatever the name, and the
// operator's exemption, for a literal only, does not cover a name.
func TestNameResolvingInsideRefused(t *testing.T) {
	for _, ip := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254", "100.64.1.1", "0.0.0.0", "198.18.0.1", "192.0.0.8"} {
		for _, operator := range []bool{false, true} {
			c := New(Options{ConnectTimeout: 2e9, HeaderTimeout: 5e9, Resolver: testkit.DNSA(t, net.ParseIP(ip))})
			_, err := c.Get(ctx(t), Request{URL: "http://peer.example.net:8080/registry", What: "registry", Limit: 100, Operator: operator})
			fe := wantPublic(t, err, RefusedAddress)
			if !strings.Contains(fe.Detail, "peer.example.net resolves to "+ip) {
				t.Errorf("%s (operator %v): detail %q", ip, operator, fe.Detail)
			}
		}
	}
}
