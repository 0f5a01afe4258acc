package testkit

import (
	"context"
	"net"
	"testing"
)

// DNS serves DNS over UDP on loopback, answering each datagram with what
// answer returns for it (nothing when it returns nil), and returns a
// resolver that asks this server and no other. The server stops when the
// test ends.
func DNS(t testing.TB, answer func(query []byte) []byte) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := answer(append([]byte(nil), buf[:n]...)); out != nil {
				pc.WriteTo(out, from)
			}
		}
	}()
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}
