package peer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
)

// A registry that endorses its own curator is refused, and never fetched.
func TestEndorsingOwnKeyRefused(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.publish(h.own.signed("1.0.0", ""))
	h.net.SetEndorsements(h.own.uri, []gen.Endorsement{{Pubkey: h.own.uri, URL: h.srv.URL, Since: "2026-11-01"}})
	h.refresh()
	p := only(t, h.net)
	wantOutcome(t, p, Refused, "our own curator key")
	if p.Copy != nil {
		t.Error("our own registry was accepted as a peer's")
	}
	if reg, sig, _ := h.srv.counts(); reg+sig != 0 {
		t.Errorf("the server was asked %d times", reg+sig)
	}
}

func TestMalformedEndorsedKeyRefused(t *testing.T) {
	for _, key := range []string{"pk:placeholder", "pk:abc", "6kozs5ey44jcees417bpf99rchoutjdz8x175zh8jeqw5fr4eaol"} {
		t.Run(key, func(t *testing.T) {
			h := newHarness(t, nil)
			h.net.SetEndorsements(h.own.uri, []gen.Endorsement{{Pubkey: key, URL: h.srv.URL, Since: "2026-11-01"}})
			h.refresh()
			p := only(t, h.net)
			wantOutcome(t, p, Refused, "endorsed pubkey: ")
			if reg, sig, _ := h.srv.counts(); reg+sig != 0 {
				t.Errorf("the server was asked %d times", reg+sig)
			}
		})
	}
}

// Whether a key is our own is decided again whenever the endorsements are
// set: after our curator key changes, a peer refused as ours is fetched,
// and a peer that now has our key is no longer.
func TestOwnKeyChanges(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.publish(h.peer.signed("1.0.0", ""))
	list := []gen.Endorsement{h.endorsement()}

	h.net.SetEndorsements(h.peer.uri, list)
	h.refresh()
	wantOutcome(t, h.only(), Refused, "our own curator key")

	h.net.SetEndorsements(h.own.uri, list)
	h.refresh()
	p := h.only()
	wantOutcome(t, p, Fresh)
	checkWhole(t, p)

	h.net.SetEndorsements(h.peer.uri, list)
	p = h.only()
	wantOutcome(t, p, Refused, "our own curator key")
	if p.Copy != nil {
		t.Error("our own registry is still served as a peer's")
	}
	before, _, _ := h.srv.counts()
	h.refresh()
	if after, _, _ := h.srv.counts(); after != before {
		t.Errorf("our own key was fetched as a peer")
	}
}

// A peer's key is its identity: a changed URL or name keeps its copy, and
// the next fetch uses the new URL; a peer no longer endorsed is dropped.
func TestEndorsementChanges(t *testing.T) {
	h := newHarness(t, nil)
	h.endorse()
	good := h.accept("1.0.0")

	moved := newPeerServer(t)
	moved.publish(h.peer.signed("1.1.0", ""))
	e := h.endorsement()
	e.URL = moved.URL
	name := "Renamed"
	e.Name = &name
	h.net.SetEndorsements(h.own.uri, []gen.Endorsement{e})
	p := h.only()
	wantKept(t, p, good)
	if p.Endorsement.URL != moved.URL || p.Endorsement.Name == nil || *p.Endorsement.Name != name {
		t.Errorf("endorsement %+v, want the new url and name", p.Endorsement)
	}
	h.refresh()
	p = h.only()
	wantOutcome(t, p, Fresh)
	if p.Copy.Registry.Version() != "1.1.0" || p.Copy.URL != moved.URL {
		t.Errorf("copy %s from %s, want 1.1.0 from %s", p.Copy.Registry.Version(), p.Copy.URL, moved.URL)
	}

	h.net.SetEndorsements(h.own.uri, nil)
	if ps := h.net.Peers(); len(ps) != 0 {
		t.Errorf("%d peers after every endorsement was dropped", len(ps))
	}
}

// Peers keeps the endorsement order, drops duplicates, and Sorted orders
// by key.
func TestPeersOrder(t *testing.T) {
	h := newHarness(t, nil)
	a, b, c := newCurator(t), newCurator(t), newCurator(t)
	list := []gen.Endorsement{
		{Pubkey: c.uri, URL: h.srv.URL, Since: "2026-11-01"},
		{Pubkey: a.uri, URL: h.srv.URL, Since: "2026-11-01"},
		{Pubkey: c.uri, URL: "https://elsewhere.example/", Since: "2026-11-01"},
		{Pubkey: b.uri, URL: h.srv.URL, Since: "2026-11-01"},
	}
	h.net.SetEndorsements(h.own.uri, list)
	ps := h.net.Peers()
	var got []string
	for _, p := range ps {
		got = append(got, p.Endorsement.Pubkey)
	}
	if want := []string{c.uri, a.uri, b.uri}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Peers order %v, want %v", got, want)
	}
	if ps[0].Endorsement.URL != h.srv.URL {
		t.Errorf("the duplicate replaced the first endorsement")
	}
	sorted := Sorted(ps)
	for i := 1; i < len(sorted); i++ {
		if sorted[i-1].Endorsement.Pubkey >= sorted[i].Endorsement.Pubkey {
			t.Errorf("Sorted is not ordered by key: %s before %s", sorted[i-1].Endorsement.Pubkey, sorted[i].Endorsement.Pubkey)
		}
	}
}

// Snapshots read while refreshes replace copies are whole: a copy is
// consistent with its own bytes and served with its own matcher. Run with
// -race.
func TestPeersDuringRefresh(t *testing.T) {
	h := newHarness(t, nil)
	h.endorse()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			for _, p := range h.net.Peers() {
				checkWhole(t, p)
				if p.Copy == nil {
					continue
				}
				var doc struct{ Version string }
				if err := json.Unmarshal(p.Copy.Registry.Bytes(), &doc); err != nil || doc.Version != p.Copy.Registry.Version() {
					t.Errorf("copy says version %s, its bytes %q (%v)", p.Copy.Registry.Version(), doc.Version, err)
				}
			}
		}
	})
	for i := range 8 {
		h.srv.publish(h.peer.signed(fmt.Sprintf("1.0.%d", i), ""))
		h.clock.Add(time.Minute)
		h.refresh()
	}
	close(done)
	wg.Wait()
	p := h.only()
	wantOutcome(t, p, Fresh)
	if p.Copy.Registry.Version() != "1.0.7" {
		t.Errorf("version %s after the last refresh, want 1.0.7", p.Copy.Registry.Version())
	}
	if n := h.builds.Load(); n != 8 {
		t.Errorf("%d matchers built for 8 versions, want 8", n)
	}
}

// The endorsements may be set again (a reloaded registry) while a fetch
// is running. Run with -race.
func TestSetEndorsementsDuringRefresh(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, withCache(dir))
	h.endorse()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			e := h.endorsement()
			name := fmt.Sprintf("name %d", i)
			e.Name = &name
			h.net.SetEndorsements(h.own.uri, []gen.Endorsement{e})
		}
	})
	for i := range 4 {
		h.srv.publish(h.peer.signed(fmt.Sprintf("1.0.%d", i), ""))
		h.refresh()
	}
	close(done)
	wg.Wait()
	p := h.only()
	wantOutcome(t, p, Fresh)
	checkWhole(t, p)
}

// After each failure in a row the next attempt waits longer, up to a cap;
// a success goes back to the refresh interval.
func TestBackoff(t *testing.T) {
	n := New(Config{Refresh: time.Hour})
	prevMax := time.Duration(0)
	for k, want := range []time.Duration{
		1: 15 * time.Minute, 2: 30 * time.Minute, 3: time.Hour, 4: 2 * time.Hour,
		5: 4 * time.Hour, 6: 4 * time.Hour, 7: 4 * time.Hour,
	} {
		if k == 0 {
			continue
		}
		lo, hi := time.Duration(1<<62), time.Duration(0)
		for range 200 {
			d := n.backoff(k)
			if d < want*9/10 || d > want*11/10 {
				t.Fatalf("backoff(%d) = %v, want %v ± 10%%", k, d, want)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		// Until the cap, every wait after k failures is longer than any
		// after k-1, jitter included.
		if want < 4*time.Hour && lo <= prevMax {
			t.Errorf("backoff(%d) can be %v, no longer than backoff(%d)'s %v", k, lo, k-1, prevMax)
		}
		prevMax = hi
	}
	if d := n.backoff(1000); d > 4*time.Hour*11/10 {
		t.Errorf("backoff(1000) = %v, past the cap", d)
	}
}

func TestBackoffSchedulesFetches(t *testing.T) {
	h := newHarness(t, nil)
	h.endorse()
	h.srv.answer(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	ctx := context.Background()
	within := func(what string, got, want time.Duration) {
		t.Helper()
		if got < want*9/10 || got > want*11/10 {
			t.Errorf("%s: next attempt in %v, want %v ± 10%%", what, got, want)
		}
	}
	hits := func() int { reg, _, _ := h.srv.counts(); return reg }

	h.net.Refresh(ctx, false) // a new peer is due at once
	wantOutcome(t, h.only(), Unreachable, "HTTP 503")
	f, next := h.state()
	if f != 1 {
		t.Fatalf("%d failures, want 1", f)
	}
	within("after 1 failure", next.Sub(h.clock.Now()), testRefresh/4)

	h.clock.Add(testRefresh / 8)
	h.net.Refresh(ctx, false)
	if hits() != 1 {
		t.Fatalf("fetched again before the backoff was over")
	}

	h.clock.Add(testRefresh / 4)
	h.net.Refresh(ctx, false)
	f, next = h.state()
	if hits() != 2 || f != 2 {
		t.Fatalf("%d fetches and %d failures once due, want 2 and 2", hits(), f)
	}
	within("after 2 failures", next.Sub(h.clock.Now()), testRefresh/2)

	// A refusal backs off the same way.
	data := registryDoc(h.peer.uri, "1.0.0", "")
	h.srv.publish(data, newCurator(t).sign(data))
	h.clock.Add(testRefresh)
	h.net.Refresh(ctx, false)
	wantOutcome(t, h.only(), Refused, "signed by a different key")
	f, next = h.state()
	if f != 3 {
		t.Fatalf("%d failures, want 3", f)
	}
	within("after 3 failures", next.Sub(h.clock.Now()), testRefresh)

	// A success resets the count and waits a refresh interval.
	h.srv.publish(h.peer.signed("1.0.0", ""))
	h.clock.Add(2 * testRefresh)
	h.net.Refresh(ctx, false)
	wantOutcome(t, h.only(), Fresh)
	f, next = h.state()
	if f != 0 {
		t.Errorf("%d failures after a success, want 0", f)
	}
	within("after a success", next.Sub(h.clock.Now()), testRefresh)
	before := hits()
	h.clock.Add(testRefresh / 2)
	h.net.Refresh(ctx, false)
	if hits() != before {
		t.Errorf("a fresh peer was fetched again before its refresh interval")
	}
}

// Refused and unreachable are told apart by IsRefusal, through wrapping.
func TestIsRefusal(t *testing.T) {
	if !IsRefusal(fmt.Errorf("peer: %w", refuse("bad %s", "thing"))) {
		t.Error("a wrapped refusal is not a refusal")
	}
	if IsRefusal(fmt.Errorf("connection refused")) {
		t.Error("a plain error is a refusal")
	}
}
