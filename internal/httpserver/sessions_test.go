package httpserver

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// One address flooding the table recycles only its own sessions; others
// keep theirs. A session running a request never makes way, and when every
// candidate is running one, add refuses instead of evicting.
func TestSessionTableEviction(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	tick := func() time.Time { now = now.Add(time.Second); return now }
	tab := newSessionTable(12, 4, time.Hour, tick)
	var honest []*session
	for i := range 8 {
		honest = append(honest, tab.add(nil, fmt.Sprintf("10.0.0.%d", i)))
	}
	for i := range 1000 {
		if tab.add(nil, "192.0.2.66") == nil {
			t.Fatalf("flood session %d refused; it should replace the flooder's own oldest", i)
		}
	}
	for _, s := range honest {
		if tab.get(s.id) == nil {
			t.Fatalf("the flood from one address evicted %s's session", s.client)
		}
	}
	if tab.len() != 12 || tab.evictions() != 996 {
		t.Errorf("%d sessions, %d evicted; want 12 and 996", tab.len(), tab.evictions())
	}

	// The table is full. honest[0] runs a request: a newcomer takes the
	// least recently used of the others, never it.
	running := honest[0].track(context.Background(), []byte("1"))
	for _, s := range honest[1:] {
		tab.get(s.id) // used after honest[0]
	}
	tab.add(nil, "198.51.100.1")
	if tab.get(honest[0].id) == nil {
		t.Fatal("a session running a request was evicted")
	}
	honest[0].untrack(running)

	// Every session of a client at its bound runs a request: refused.
	busy := newSessionTable(10, 2, time.Hour, tick)
	for range 2 {
		busy.add(nil, "a").track(context.Background(), []byte("1"))
	}
	if busy.add(nil, "a") != nil {
		t.Error("a client whose sessions all run requests got another")
	}
	if busy.add(nil, "b") == nil {
		t.Error("another client was refused")
	}
}
