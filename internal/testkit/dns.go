package testkit

import (
	"context"
	"encoding/binary"
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

// DNSA is DNS with a server that answers every A question with addr and
// every other question with no answer: a name the test chooses then
// resolves to addr (a public or internal address no test connects to,
// or loopback) without any query leaving this machine.
func DNSA(t testing.TB, addr net.IP) *net.Resolver {
	t.Helper()
	return DNS(t, func(q []byte) []byte {
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
