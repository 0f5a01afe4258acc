package fetch

import (
	"encoding/binary"
	"net"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// stubDNS answers every A question with addr and every other question
// with no answer, over UDP on loopback; it returns a resolver that asks
// it and nothing else.
func stubDNS(t *testing.T, addr net.IP) *net.Resolver {
	t.Helper()
	return testkit.DNS(t, func(q []byte) []byte {
		n := len(q)
		if n < 12 {
			return nil
		}
		// The question ends after its name's labels and four bytes.
		end := 12
		for end < n && q[end] != 0 {
			end += int(q[end]) + 1
		}
		end += 5
		if end > n {
			return nil
		}
		qtype := binary.BigEndian.Uint16(q[end-4:])
		out := append([]byte(nil), q[:end]...)
		out[2], out[3] = 0x81, 0x80 // a response, recursion available, no error
		binary.BigEndian.PutUint16(out[6:], 0)
		binary.BigEndian.PutUint16(out[8:], 0)
		binary.BigEndian.PutUint16(out[10:], 0)
		if qtype == 1 {
			binary.BigEndian.PutUint16(out[6:], 1)
			out = append(out, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4)
			out = append(out, addr.To4()...)
		}
		return out
	})
}

// A name whose DNS answer is a loopback, private or link-local address
// is refused when connecting, before any packet goes there: the check is
// on the address the dial is about to use, whatever the name, and the
// operator's exemption, for a literal only, does not cover a name.
func TestNameResolvingInsideRefused(t *testing.T) {
	for _, ip := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254", "100.64.1.1", "0.0.0.0", "198.18.0.1", "192.0.0.8"} {
		for _, operator := range []bool{false, true} {
			c := New(Options{ConnectTimeout: 2e9, HeaderTimeout: 5e9, Resolver: stubDNS(t, net.ParseIP(ip))})
			_, err := c.Get(ctx(t), Request{URL: "http://peer.example.net:8080/registry", What: "registry", Limit: 100, Operator: operator})
			fe := wantPublic(t, err, RefusedAddress)
			if !strings.Contains(fe.Detail, "peer.example.net resolves to "+ip) {
				t.Errorf("%s (operator %v): detail %q", ip, operator, fe.Detail)
			}
		}
	}
}
