package httpserver

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/mcp"
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
	running := honest[0].requests.Start(context.Background(), []byte("1"))
	for _, s := range honest[1:] {
		tab.get(s.id) // used after honest[0]
	}
	tab.add(nil, "198.51.100.1")
	if tab.get(honest[0].id) == nil {
		t.Fatal("a session running a request was evicted")
	}
	honest[0].requests.Finish(running)

	// Every session of a client at its bound runs a request: refused.
	busy := newSessionTable(10, 2, time.Hour, tick)
	for range 2 {
		busy.add(nil, "a").requests.Start(context.Background(), []byte("1"))
	}
	if busy.add(nil, "a") != nil {
		t.Error("a client whose sessions all run requests got another")
	}
	if busy.add(nil, "b") == nil {
		t.Error("another client was refused")
	}
}

// Every version initialize can negotiate survives the id's date encoding,
// so any of them can be taken up on another replica.
func TestSessionIDVersions(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	ids := newSessionIDs(bytes.Repeat([]byte{7}, 32), time.Hour)
	other := newSessionIDs(bytes.Repeat([]byte{7}, 32), time.Hour) // same secret, another process
	for _, v := range mcp.LegacyVersions {
		id, expires := ids.issue(v, now)
		if !expires.Equal(now.Add(time.Hour)) {
			t.Errorf("%s: expires %v", v, expires)
		}
		c, ok := other.check(id, now)
		if !ok || c.version != v || c.own || !c.expires.Equal(expires) {
			t.Errorf("%s: read back as %+v, %v", v, c, ok)
		}
		if c, ok := ids.check(id, now); !ok || !c.own {
			t.Errorf("%s: its issuer does not know it as its own: %+v, %v", v, c, ok)
		}
	}
	// A version that is not a date, or one this build does not serve,
	// yields an id no other process takes up.
	for _, v := range []string{"", "draft", "2026-07-28", "1999-01-01"} {
		id, _ := ids.issue(v, now)
		if _, ok := other.check(id, now); ok {
			t.Errorf("an id for version %q was accepted", v)
		}
	}
}

// An id signed correctly but of another format version is refused: a
// later format may lay its fields out differently.
func TestSessionIDFormatVersion(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	ids := newSessionIDs(bytes.Repeat([]byte{7}, 32), time.Hour)
	id, _ := ids.issue(mcp.LatestLegacy, now)
	b, err := idEncoding.DecodeString(id)
	if err != nil {
		t.Fatal(err)
	}
	b[idFormat] = 2
	copy(b[idMAC:], ids.sum(b[:idMAC])) // signed, so only the format is wrong
	if _, ok := ids.check(idEncoding.EncodeToString(b), now); ok {
		t.Error("an id of format 2 was accepted")
	}
}

// A secret shorter than MinSessionSecretBytes is a programming error.
func TestSessionSecretTooShort(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a 31-byte secret was accepted")
		}
	}()
	newSessionIDs(make([]byte, 31), 0)
}

// The ended ids a replica remembers are bounded by max, oldest forgotten
// first, and dropped once expired.
func TestSessionTableTombstones(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	secret := bytes.Repeat([]byte{9}, 32)
	issuer := newSessionIDs(secret, time.Hour)
	tab := newSessionTable(3, 3, time.Minute, clock)
	tab.ids = newSessionIDs(secret, time.Hour)
	var ended []string
	for range 5 {
		id, _ := issuer.issue(mcp.LatestLegacy, now)
		if !tab.end(id) {
			t.Fatal("DELETE of a valid id from elsewhere refused")
		}
		ended = append(ended, id)
	}
	if len(tab.ended) != 3 || tab.endedList.Len() != 3 {
		t.Fatalf("%d ended ids remembered, want 3", len(tab.ended))
	}
	if _, ok := tab.adoptable(ended[0]); !ok {
		t.Error("the oldest ended id, forgotten, is not adoptable again")
	}
	if _, ok := tab.adoptable(ended[4]); ok {
		t.Error("the newest ended id is adoptable")
	}
	now = now.Add(time.Hour)
	tab.sweep()
	if len(tab.ended) != 0 || tab.endedList.Len() != 0 {
		t.Errorf("%d ended ids remembered after they expired", len(tab.ended))
	}
}
