package proposals

import (
	"crypto/ed25519"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
)

func testKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed([]byte(strings.Repeat(string(rune('a'+seed)), ed25519.SeedSize)))
}

// A decision made by a file holding the curator key is signed, in the
// file as read back, over what it says: its signature verifies with
// that key, not with another, and not once any of its words changed.
func TestDecisionsAreSignedWithTheNodesKey(t *testing.T) {
	key := testKey(0)
	node := curatorkey.URI(curatorkey.Public(key))
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{Now: func() time.Time { return t0 }})
	s.SignDecisions(key)
	a, _ := s.Add(report("a"))
	b, _ := s.Add(report("b"))
	c, _ := s.Add(report("c"))
	if _, err := s.Decide(a.ID, gen.ProposalStatusAccepted, Decision{Actor: "alice", Reason: Optional("good catch"), Version: Optional("1.0.1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reject(Selection{IDs: []string{b.ID, c.ID}}, Decision{Actor: "cli:bob", Reason: Optional("duplicate\nstatus: accepted")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ps, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := VerifyDecision(node, p); err != nil {
			t.Errorf("%s (%s): %v", p.ID, p.Status, err)
		}
		if err := VerifyDecision(curatorkey.URI(curatorkey.Public(testKey(1))), p); err == nil {
			t.Errorf("%s: verified with another node's key", p.ID)
		}
		for name, change := range map[string]func(d *Decision){
			"reason":  func(d *Decision) { d.Reason = Optional("something else") },
			"actor":   func(d *Decision) { d.Actor = "mallory" },
			"time":    func(d *Decision) { d.Time = d.Time.Add(time.Second) },
			"version": func(d *Decision) { d.Version = Optional("9.9.9") },
		} {
			q := p.clone()
			change(q.Decision)
			if VerifyDecision(node, q) == nil {
				t.Errorf("%s: the signature still verifies with its %s changed", p.ID, name)
			}
		}
		q := p.clone()
		q.Status = map[gen.ProposalStatus]gen.ProposalStatus{gen.ProposalStatusAccepted: gen.ProposalStatusRejected, gen.ProposalStatusRejected: gen.ProposalStatusAccepted}[p.Status]
		if q.Decision != nil && VerifyDecision(node, q) == nil {
			t.Errorf("%s: the signature of a %s decision verifies as %s", p.ID, p.Status, q.Status)
		}
	}
}

// Without a key, decisions are recorded unsigned, and say so.
func TestDecisionsWithoutAKeyAreUnsigned(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "r.json"+Suffix), Options{Now: func() time.Time { return t0 }})
	a, _ := s.Add(report("a"))
	p, err := s.Decide(a.ID, gen.ProposalStatusRejected, Decision{Actor: "alice", Reason: Optional("no")})
	if err != nil {
		t.Fatal(err)
	}
	if p.Decision.Signature != nil {
		t.Fatalf("a decision made without a key has a signature: %q", *p.Decision.Signature)
	}
	if err := VerifyDecision(curatorkey.URI(curatorkey.Public(testKey(0))), p); !errors.Is(err, ErrUnsigned) {
		t.Fatalf("VerifyDecision of an unsigned decision: %v, want ErrUnsigned", err)
	}
}
