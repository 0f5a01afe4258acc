package proposals

import (
	"fmt"
	"testing"
	"time"
)

// 10,000 clients each send an invalid proposal: none is charged (each is
// refunded), so a fresh client's proposal is taken and the table holds
// only it.
func TestInvalidProposalsCostNothing(t *testing.T) {
	l := NewLimiter(10, 0, 0)
	for i := range 10000 {
		ch, r := l.Take(t0, Client{Addr: fmt.Sprintf("10.%d.%d.1", i/256, i%256)})
		if r != nil {
			t.Fatalf("client %d refused: %v", i, r)
		}
		ch.Refund() // the proposal was invalid: nothing recorded
	}
	if _, r := l.Take(t0, Client{Addr: "192.0.2.7"}); r != nil {
		t.Fatalf("a fresh client after 10,000 invalid proposals: %v", r)
	}
	if n := l.Clients(); n != 1 {
		t.Errorf("the limiter remembers %d clients, want 1 (invalid proposals leave nothing)", n)
	}
}

// A full table forgets the client charged least recently; it never
// refuses a newcomer.
func TestAFullTableEvictsTheLeastRecentlyCharged(t *testing.T) {
	l := NewLimiter(2, maxClients+10, 0)
	first := Client{Addr: "172.16.0.1"}
	l.Take(t0, first)
	l.Take(t0, first)
	for i := range maxClients - 1 {
		if _, r := l.Take(t0, Client{Addr: fmt.Sprintf("10.0.%d.%d", i/256, i%256)}); r != nil {
			t.Fatalf("client %d refused: %v", i, r)
		}
	}
	if _, r := l.Take(t0, first); r == nil {
		t.Fatal("the first client's third proposal was taken while it is remembered")
	}
	if _, r := l.Take(t0, Client{Addr: "192.0.2.200"}); r != nil {
		t.Fatalf("a newcomer to a full table was refused: %v", r)
	}
	if n := l.Clients(); n != maxClients {
		t.Errorf("the limiter remembers %d clients, want %d", n, maxClients)
	}
	// The newcomer took the place of the least recently charged: first.
	if _, r := l.Take(t0, first); r != nil {
		t.Errorf("the least recently charged client is still remembered: %v", r)
	}
}

// An IPv6 client is its /64 (or the prefix given): other addresses of
// one /64 share its allowance, and the refusal names the prefix with the
// real count.
func TestIPv6ClientsAreCountedByPrefix(t *testing.T) {
	l := NewLimiter(2, 0, 0)
	l.Take(t0, Client{Addr: "2001:db8:1:2::1"})
	l.Take(t0.Add(23*time.Minute), Client{Addr: "2001:db8:1:2:aaaa::9"})
	_, r := l.Take(t0.Add(23*time.Minute), Client{Addr: "2001:db8:1:2:ffff:ffff:ffff:ffff"})
	if r == nil {
		t.Fatal("a third address of the same /64 was taken")
	}
	if r.Who != "IPv6 /64 2001:db8:1:2::/64" || r.Count != 2 || r.Window != time.Hour || r.Retry != 37*time.Minute {
		t.Errorf("refusal %+v, want IPv6 /64 2001:db8:1:2::/64 counting 2 in the hour, retry in 37m", *r)
	}
	if _, r := l.Take(t0, Client{Addr: "2001:db8:1:3::1"}); r != nil {
		t.Errorf("another /64 was refused: %v", r)
	}
	l48 := NewLimiter(1, 0, 48)
	l48.Take(t0, Client{Addr: "2001:db8:1:2::1"})
	if _, r := l48.Take(t0, Client{Addr: "2001:db8:1:ffff::1"}); r == nil || r.Who != "IPv6 /48 2001:db8:1::/48" {
		t.Errorf("with a /48 prefix, another /64 of the /48: %v, want refused naming the /48", r)
	}
}

// The message counts what was recorded: one proposal, not the rate.
func TestTheRefusalCountsWhatWasRecorded(t *testing.T) {
	l := NewLimiter(10, 0, 0)
	l.Take(t0, Client{Addr: "192.0.2.1", Session: "a"})
	l.Take(t0, Client{Addr: "192.0.2.1", Session: "a"}) // session a: 2
	for range 8 {
		l.Take(t0, Client{Addr: "192.0.2.1", Session: "b"}) // address: 10
	}
	_, r := l.Take(t0, Client{Addr: "192.0.2.1", Session: "c"})
	if r == nil || r.Who != "address 192.0.2.1" || r.Count != 10 {
		t.Errorf("refusal %v, want the address's real count, 10", r)
	}
	l2 := NewLimiter(1, 0, 0)
	l2.Take(t0, Client{Addr: "192.0.2.9"})
	if _, r := l2.Take(t0, Client{Addr: "192.0.2.9"}); r == nil || r.Count != 1 {
		t.Errorf("refusal %v, want it to count the 1 recorded", r)
	}
}

// The server-wide ceiling holds however many addresses send.
func TestTheTotalCeilingHoldsAcrossClients(t *testing.T) {
	l := NewLimiter(10, 5, 0)
	for i := range 5 {
		if _, r := l.Take(t0, Client{Addr: fmt.Sprintf("192.0.2.%d", i+1)}); r != nil {
			t.Fatalf("client %d refused: %v", i, r)
		}
	}
	_, r := l.Take(t0.Add(10*time.Minute), Client{Addr: "198.51.100.1"})
	if r == nil || r.Who != "" || r.Count != 5 {
		t.Errorf("the sixth proposal of the hour: %v, want refused by the total, counting 5", r)
	}
}
