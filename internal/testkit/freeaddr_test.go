package testkit

import (
	"net"
	"strconv"
	"testing"
)

// FreeAddr's addresses are distinct, can be listened on, and lie below
// the ephemeral range where the system says what it is.
func TestFreeAddr(t *testing.T) {
	lo := ephemeralLow()
	seen := map[string]bool{}
	for range 50 {
		addr := FreeAddr(t)
		if seen[addr] {
			t.Fatalf("%s handed out twice", addr)
		}
		seen[addr] = true
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		if port, _ := strconv.Atoi(p); lo > minFreePort && (port < minFreePort || port >= lo) {
			t.Errorf("%s: port outside [%d, %d)", addr, minFreePort, lo)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listening on %s: %v", addr, err)
		}
		l.Close()
	}
}
