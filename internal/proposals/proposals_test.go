package proposals

import (
	"github.com/three-good-sources/3gs/gen"

	"encoding/base64"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/safefile"
)

var t0 = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

func open(t *testing.T, path string, o Options) *File {
	t.Helper()
	s, _, err := Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func report(slug string) gen.ProposalRecord {
	return gen.ProposalRecord{Action: gen.ProposalActionReportDeadSource, Slug: slug, Rank: ptr(2), Reason: "the second source answers 404"}
}

func ptr[T any](v T) *T { return &v }

// text is the optional string s, empty when absent.
func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestReopenKeepsTheLastStateOfEachProposal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{})
	a, err := s.Add(report("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(a.ID, gen.ProposalStatusRejected, Decision{Actor: "cli", Reason: Optional("it answers")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := open(t, path, Options{})
	got, err := s2.Get(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != gen.ProposalStatusRejected || text(got.Decision.Reason) != "it answers" {
		t.Fatalf("after reopening: %+v", got)
	}
	if s2.lines != 1 {
		t.Errorf("the reopened file holds %d lines, want 1 (superseded lines compacted)", s2.lines)
	}
}

func TestOpenCutsATornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{})
	a, _ := s.Add(report("a"))
	s.Close()
	whole, _ := os.ReadFile(path)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"p0123456789abcdef","crea`)
	f.Close()
	s2, notes, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if len(notes) != 1 || !strings.Contains(notes[0], "torn") {
		t.Errorf("notes = %q, want one about the torn line", notes)
	}
	if after, _ := os.ReadFile(path); string(after) != string(whole) {
		t.Errorf("the file after repair:\n%s\nwant:\n%s", after, whole)
	}
	if _, err := s2.Get(a.ID); err != nil {
		t.Errorf("the whole line before the torn one was lost: %v", err)
	}
}

func TestABrokenLineInTheMiddleIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{})
	s.Add(report("a"))
	s.Close()
	data, _ := os.ReadFile(path)
	os.WriteFile(path, append([]byte("{not json}\n"), data...), 0o600)
	if _, _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("Open = %v, want an error naming line 1", err)
	}
}

func TestAddStopsAtMaxPending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{MaxPending: 3})
	var first *Proposal
	for i := range 3 {
		p, err := s.Add(report("a"))
		if err != nil {
			t.Fatalf("proposal %d: %v", i+1, err)
		}
		if first == nil {
			first = p
		}
	}
	before, _ := os.ReadFile(path)
	if _, err := s.Add(report("a")); !errors.Is(err, ErrFull) {
		t.Fatalf("the fourth Add = %v, want ErrFull", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a refused proposal changed the file")
	}
	if _, err := s.Decide(first.ID, gen.ProposalStatusAccepted, Decision{Actor: "cli"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(report("a")); err != nil {
		t.Errorf("after one was decided, Add = %v, want room for one", err)
	}
}

func TestDecidedProposalsAreDroppedAfterRetention(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	now := t0
	clock := func() time.Time { return now }
	s := open(t, path, Options{Retention: 24 * time.Hour, Now: clock})
	old, _ := s.Add(report("old"))
	s.Decide(old.ID, gen.ProposalStatusRejected, Decision{Actor: "cli"})
	waiting, _ := s.Add(report("waiting"))
	s.Close()
	now = t0.Add(25 * time.Hour)
	s2 := open(t, path, Options{Retention: 24 * time.Hour, Now: clock})
	if _, err := s2.Get(old.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("a proposal decided 25 hours ago with 24 hours' retention: Get = %v, want ErrNotFound", err)
	}
	if _, err := s2.Get(waiting.ID); err != nil {
		t.Errorf("a pending proposal was dropped: %v", err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), old.ID) {
		t.Error("the file still holds the expired proposal")
	}
}

func TestOneWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	open(t, path, Options{})
	if _, _, err := Open(path, Options{}); !errors.Is(err, safefile.ErrHeld) {
		t.Fatalf("a second Open = %v, want safefile.ErrHeld", err)
	}
}

func TestALaterVoteReplacesTheKeysEarlierOne(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "r.json"+Suffix), Options{})
	p, _ := s.Add(report("a"))
	s.AddVote(p.ID, Vote{Pubkey: "pk:x", Vote: gen.VoteChoiceSupport, Time: t0})
	got, err := s.AddVote(p.ID, Vote{Pubkey: "pk:x", Vote: gen.VoteChoiceOppose, Time: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if sup, opp := got.Tally(); sup != 0 || opp != 1 {
		t.Errorf("tally = %d for, %d against; want 0, 1", sup, opp)
	}
	if _, err := s.AddVote(p.ID, Vote{Pubkey: "pk:x", Vote: gen.VoteChoiceSupport, Time: t0}); err == nil {
		t.Error("an older vote replaced a newer one")
	}
	if _, err := s.AddVote(p.ID, Vote{Pubkey: "pk:x", Vote: gen.VoteChoiceSupport, Time: t0.Add(time.Minute)}); err == nil {
		t.Error("another vote signed in the same second replaced the one recorded")
	}
}

func TestVoteStatement(t *testing.T) {
	key, _ := curatorkey.Generate()
	node := "pk:node"
	id := NewID()
	voter, sig := SignVote(key, node, id, gen.VoteChoiceSupport, t0)
	v := Vote{Pubkey: voter, Vote: gen.VoteChoiceSupport, Time: t0, Signature: sig}
	if err := VerifyVote(node, id, v, t0.Add(time.Minute)); err != nil {
		t.Fatalf("a fresh vote: %v", err)
	}
	changed := map[string]func() error{
		"another node":     func() error { return VerifyVote("pk:other", id, v, t0) },
		"another proposal": func() error { return VerifyVote(node, NewID(), v, t0) },
		"another vote": func() error {
			w := v
			w.Vote = gen.VoteChoiceOppose
			return VerifyVote(node, id, w, t0)
		},
		"another time": func() error {
			w := v
			w.Time = t0.Add(time.Second)
			return VerifyVote(node, id, w, t0)
		},
		// The statement says whole seconds: a fraction would let a vote
		// seen once be sent again as a "later" one.
		"a fraction of a second later": func() error {
			w := v
			w.Time = t0.Add(time.Millisecond)
			return VerifyVote(node, id, w, t0)
		},
		// S + L, the group order: the same signature to a lax verifier.
		"the signature's S plus the group order": func() error {
			w := v
			raw, _ := base64.StdEncoding.DecodeString(w.Signature)
			be := slices.Clone(raw[32:])
			slices.Reverse(be)
			s := new(big.Int).SetBytes(be)
			l, _ := new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
			s.Add(s, l)
			le := s.FillBytes(make([]byte, 32))
			slices.Reverse(le)
			w.Signature = base64.StdEncoding.EncodeToString(append(raw[:32:32], le...))
			return VerifyVote(node, id, w, t0)
		},
		// The same 64 bytes written another way (the last character's
		// unused bits set): the one signature, another string.
		"the signature's base64 with its spare bits set": func() error {
			w := v
			// 64 bytes end in A, Q, g or w, then "=="; the next letter
			// differs in the unused bits alone.
			b := []byte(w.Signature)
			b[85]++
			w.Signature = string(b)
			return VerifyVote(node, id, w, t0)
		},
	}
	for name, f := range changed {
		if err := f(); err == nil {
			t.Errorf("%s: the signature still verified", name)
		}
	}
	if err := VerifyVote(node, id, v, t0.Add(MaxVoteAge+time.Second)); !errors.Is(err, ErrVoteTime) {
		t.Errorf("a vote older than MaxVoteAge: %v, want ErrVoteTime", err)
	}
	if err := VerifyVote(node, id, v, t0.Add(-MaxVoteSkew-time.Second)); !errors.Is(err, ErrVoteTime) {
		t.Errorf("a vote from the future: %v, want ErrVoteTime", err)
	}
}

func TestLimiterCountsEveryKey(t *testing.T) {
	l := NewLimiter(2, 0, 0)
	if _, r := l.Take(t0, Client{"192.0.2.1", "1"}); r != nil {
		t.Fatal("first refused:", r)
	}
	if _, r := l.Take(t0, Client{"192.0.2.1", "2"}); r != nil {
		t.Fatal("second refused:", r)
	}
	if _, r := l.Take(t0, Client{"192.0.2.1", "3"}); r == nil || r.Retry != time.Hour {
		t.Errorf("a third from the same address: %v, want refused for an hour", r)
	}
	if _, r := l.Take(t0, Client{"192.0.2.2", "3"}); r != nil {
		t.Error("another address with a fresh session was refused:", r)
	}
	if _, r := l.Take(t0.Add(time.Hour), Client{"192.0.2.1", "1"}); r != nil {
		t.Error("refused after the window ended:", r)
	}
}

// A vote sent again as it was (it is public: get_proposal shows it)
// changes nothing and writes nothing, so replaying it cannot grow the file.
func TestAVoteSentAgainWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{})
	p, _ := s.Add(report("a"))
	v := Vote{Pubkey: "pk:x", Vote: gen.VoteChoiceSupport, Time: t0, Signature: "sig"}
	if _, err := s.AddVote(p.ID, v); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	got, err := s.AddVote(p.ID, v)
	if err != nil {
		t.Fatalf("the same vote again: %v", err)
	}
	after, _ := os.Stat(path)
	if after.Size() != before.Size() {
		t.Errorf("the same vote again wrote %d bytes", after.Size()-before.Size())
	}
	if sup, opp := got.Tally(); sup != 1 || opp != 0 {
		t.Errorf("tally = %d for, %d against; want 1, 0", sup, opp)
	}
}

// A line read is the same line written again, byte for byte: a
// compaction rewrites the proposals it keeps as the file held them.
func TestALineIsWrittenBackAsRead(t *testing.T) {
	for _, line := range []string{
		`{"id":"p0123456789abcdef","created":"2026-11-26T01:00:00Z","action":"replace_source","slug":"go-learning","rank":2,"source":{"rank":2,"name":"N","url":"https://n.example/","type":"book","why":"W"},"reason":"R","contact":"c","status":"accepted","votes":[{"pubkey":"pk:x","vote":"support","time":"2026-11-26T01:00:00.5Z","signature":"AA=="}],"decision":{"time":"2026-11-26T02:00:00Z","reason":"ok","actor":"cli","version":"1.0.1"},"client":"2001:db8:1:2::/64"}`,
		`{"id":"p0123456789abcdef","created":"2026-11-26T01:00:00Z","action":"remove_category","slug":"go-learning","reason":"","status":"rejected","decision":{"time":"2026-11-26T02:00:00Z","actor":"admin"},"client":"192.0.2.1","digest":"sha256:94984a62ac4ce9a708c4ee72e58e1792a7c65bc4f4410d502c3c6d77e48550c7"}`,
		`{"id":"p0123456789abcdef","created":"2026-11-26T01:00:00Z","action":"report_dead_source","slug":"go-learning","rank":3,"reason":"gone","status":"pending"}`,
	} {
		p, err := decodeLine([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		got, err := encodeLine(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != line+"\n" {
			t.Errorf("read\n%s\nwritten back as\n%s", line, got)
		}
	}
}
