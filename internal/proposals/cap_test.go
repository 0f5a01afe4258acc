package proposals

import (
	"github.com/three-good-sources/3gs/gen"

	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// large is a proposal whose line takes about 3.6 KB.
func large(slug string) gen.ProposalRecord {
	p := report(slug)
	p.Reason = strings.Repeat("a flood of text ", 220)
	return p
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// The attack of issue 44 row 1, small: fill the file, the curator rejects
// every pending proposal, the attacker fills it again, twice. The file
// stays within its cap throughout, refusals are ErrCapped, and the
// rejected proposals keep their decision and a digest, not their body.
func TestTheCapHoldsThroughFloodsAndBulkRejections(t *testing.T) {
	const max = 64 << 10
	now := t0
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{MaxBytes: max, Now: func() time.Time { return now }})
	var first int
	for round := range 3 {
		n := 0
		for {
			_, err := s.Add(large("a"))
			if errors.Is(err, ErrCapped) {
				break
			}
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if n++; n > 1000 {
				t.Fatalf("round %d: 1000 proposals of 3.6 KB recorded under a cap of %d bytes", round, max)
			}
		}
		if size := fileSize(t, path); size > max {
			t.Fatalf("round %d: the file is %d bytes, past its cap of %d", round, size, max)
		}
		if round == 0 {
			first = n
		} else if n < first*3/4 {
			t.Errorf("round %d: only %d proposals fitted after the bulk rejection, %d the first time: the rejected ones still take the room", round, n, first)
		}
		now = now.Add(time.Minute)
		ids, err := s.Reject(Selection{AllPending: true}, Decision{Actor: "cli", Reason: Optional("flood")})
		if err != nil || len(ids) != n {
			t.Fatalf("round %d: rejecting all pending: %d rejected, %v; want %d", round, len(ids), err, n)
		}
		if size := fileSize(t, path); size > max/4 {
			t.Errorf("round %d: after rejecting all, the file is %d bytes: the bodies were not dropped", round, size)
		}
	}
	s.Close()
	ps, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Status != gen.ProposalStatusRejected || p.Decision == nil || !strings.HasPrefix(text(p.Digest), "sha256:") || p.Reason != "" {
			t.Fatalf("a rejected proposal after compaction: %+v; want its decision and digest, no body", p)
		}
	}
}

// A decided proposal keeps its body a day (BodyRetention), then a
// compaction (Tidy, or a start) drops it and keeps the digest of the line
// that held it.
func TestDecidedBodiesAreCompactedAfterADay(t *testing.T) {
	now := t0
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{Now: func() time.Time { return now }})
	a, _ := s.Add(large("a"))
	pending, _ := s.Add(large("b"))
	if _, err := s.Decide(a.ID, gen.ProposalStatusRejected, Decision{Actor: "cli", Reason: Optional("no")}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(23 * time.Hour)
	s.Tidy()
	if p, _ := s.Get(a.ID); p.Digest != nil || p.Reason == "" {
		t.Fatalf("compacted within the day: %+v", p)
	}
	now = now.Add(2 * time.Hour)
	before := fileSize(t, path)
	if err := s.Tidy(); err != nil {
		t.Fatal(err)
	}
	p, _ := s.Get(a.ID)
	if p.Reason != "" || !strings.HasPrefix(text(p.Digest), "sha256:") || p.Decision == nil || text(p.Decision.Reason) != "no" {
		t.Errorf("a day after its decision: %+v; want no body, a digest, the decision kept", p)
	}
	if after := fileSize(t, path); after >= before-3000 {
		t.Errorf("the file went from %d to %d bytes: the body is still in it", before, after)
	}
	if q, _ := s.Get(pending.ID); q.Reason == "" || q.Digest != nil {
		t.Errorf("a pending proposal lost its body: %+v", q)
	}
}

// A file over its cap (an older 3gs let it grow) is compacted as it is
// opened: decided bodies dropped, so it fits again.
func TestOpenCompactsAFileOverItsCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{MaxBytes: 1 << 20})
	var ids []string
	for range 40 {
		p, _ := s.Add(large("a"))
		ids = append(ids, p.ID)
	}
	s.Reject(Selection{IDs: ids[:30]}, Decision{Actor: "cli", Reason: Optional("flood")})
	s.Close()
	s2 := open(t, path, Options{MaxBytes: 64 << 10})
	if size := fileSize(t, path); size > 64<<10 {
		t.Errorf("reopened with a 64 KiB cap, the file is %d bytes", size)
	}
	if s2.Pending() != 10 {
		t.Errorf("%d pending after the compaction, want 10", s2.Pending())
	}
}

func TestRejectFilters(t *testing.T) {
	now := t0
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{Now: func() time.Time { return now }})
	add := func(client string) string {
		p := report("a")
		p.Client = Optional(client)
		rec, err := s.Add(p)
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Hour)
		return rec.ID
	}
	old := add("192.0.2.1")
	v6 := add("2001:db8:1:2::/64")
	other := add("198.51.100.7")
	fresh := add("")
	if _, err := s.Reject(Selection{IDs: []string{old, "p0000000000000000"}}, Decision{Actor: "cli", Reason: Optional("x")}); !errors.Is(err, ErrNotFound) {
		t.Errorf("ids with one unknown: %v, want ErrNotFound", err)
	}
	if p, _ := s.Get(old); p.Status != gen.ProposalStatusPending {
		t.Errorf("a failed list rejected %s anyway", old)
	}
	got, _ := s.Reject(Selection{FromClient: netip.MustParsePrefix("2001:db8:1:2::77/128")}, Decision{Actor: "cli", Reason: Optional("x")})
	if len(got) != 1 || got[0] != v6 {
		t.Errorf("from an address of the /64: rejected %v, want [%s]", got, v6)
	}
	got, _ = s.Reject(Selection{OlderThan: t0.Add(90 * time.Minute)}, Decision{Actor: "cli", Reason: Optional("x")})
	if len(got) != 1 || got[0] != old {
		t.Errorf("older than 1h30 after the first: rejected %v, want [%s]", got, old)
	}
	got, _ = s.Reject(Selection{AllPending: true}, Decision{Actor: "cli", Reason: Optional("x")})
	if len(got) != 2 || got[0] != other || got[1] != fresh {
		t.Errorf("all pending: rejected %v, want [%s %s]", got, other, fresh)
	}
	if cut, err := ParseOlderThan("3d", t0); err != nil || !cut.Equal(t0.Add(-72*time.Hour)) {
		t.Errorf("ParseOlderThan(3d) = %s, %v", cut, err)
	}
}

// At the cap with pending proposals alone, a refused proposal rewrites
// nothing: a flood of refusals must not become a flood of rewrites.
func TestARefusalAtTheCapRewritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{MaxBytes: 64 << 10})
	for {
		if _, err := s.Add(large("a")); errors.Is(err, ErrCapped) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.Stat(path)
	if _, err := s.Add(large("a")); !errors.Is(err, ErrCapped) {
		t.Fatalf("at the cap: %v, want ErrCapped", err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) {
		t.Error("a refusal at the cap rewrote the file")
	}
}

// Decided proposals past a quarter of the cap lose their bodies before
// any of them is dropped: the decisions stay on record.
func TestDecidedPastAQuarterAreCompactedNotDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{MaxBytes: 64 << 10})
	var ids []string
	for range 8 { // about 29 KB: less than three quarters, more than one
		p, err := s.Add(large("a"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	got, err := s.Reject(Selection{AllPending: true}, Decision{Actor: "cli", Reason: Optional("flood")})
	if err != nil || len(got) != 8 {
		t.Fatalf("rejected %d, %v", len(got), err)
	}
	for _, id := range ids {
		p, err := s.Get(id)
		if err != nil {
			t.Fatalf("%s was dropped: %v", id, err)
		}
		if p.Digest == nil {
			t.Errorf("%s kept its body past a quarter of the cap", id)
		}
	}
}
