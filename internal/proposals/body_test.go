package proposals

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
)

// A proposal's body is kept in the file, not in memory, and read back
// whole wherever the proposal is shown or changed: after it is added,
// after a reopen, a vote, a compaction and a rejection in bulk.
func TestBodiesAreReadBackFromTheFile(t *testing.T) {
	now := t0
	path := filepath.Join(t.TempDir(), "r.json"+Suffix)
	s := open(t, path, Options{Now: func() time.Time { return now }})
	p := gen.ProposalRecord{Action: gen.ProposalActionReplaceSource, Slug: "a", Rank: ptr(2), Reason: "better", Source: &gen.Source{Name: "New", Rank: 2, Type: "documentation", URL: "https://example.org/new", Why: "It is kept up to date."}}
	added, err := s.Add(p)
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		got, err := s.Get(added.ID)
		if err != nil || got.Source == nil || got.Source.URL != "https://example.org/new" {
			t.Fatalf("%s: Get = %+v, %v; want the source proposed", when, got, err)
		}
		page, _ := s.List(Filter{})
		if len(page) == 0 || page[0].Source == nil {
			t.Fatalf("%s: List lost the body", when)
		}
	}
	if s.items[added.ID].Source != nil {
		t.Error("the body is held in memory")
	}
	check("after Add")
	s.Close()
	s = open(t, path, Options{Now: func() time.Time { return now }})
	check("after reopening")
	key, _ := curatorkey.Generate()
	now = now.Add(time.Minute)
	voter, sig := SignVote(key, "pk:node", added.ID, gen.VoteChoiceSupport, now)
	if _, err := s.AddVote(added.ID, Vote{Pubkey: voter, Vote: gen.VoteChoiceSupport, Time: now, Signature: sig}); err != nil {
		t.Fatal(err)
	}
	check("after a vote")
	if err := s.compact(); err != nil {
		t.Fatal(err)
	}
	check("after a compaction")
	if _, err := s.Reject(Selection{AllPending: true}, Decision{Actor: "cli", Reason: Optional("no")}); err != nil {
		t.Fatal(err)
	}
	check("after a rejection in bulk")
	if got, _ := s.Get(added.ID); got.Status != gen.ProposalStatusRejected || len(got.Votes) != 1 {
		t.Errorf("after the rejection: %+v", got)
	}
}
