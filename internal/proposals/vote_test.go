package proposals

import (
	"github.com/three-good-sources/3gs/gen"

	"errors"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/curatorkey"
)

// A vote dated minutes ahead would stand until its time and refuse the
// voter's honest later votes meanwhile: past a minute's skew it is
// refused, and the message says by how much it is ahead.
func TestAVoteDatedMinutesAheadIsRefused(t *testing.T) {
	key, _ := curatorkey.Generate()
	node := "pk:node"
	id := "p0f3a9c2e41b7d586"
	at := t0.Add(2 * time.Minute)
	voter, sig := SignVote(key, node, id, gen.VoteChoiceOppose, at)
	err := VerifyVote(node, id, Vote{Pubkey: voter, Vote: gen.VoteChoiceOppose, Time: at, Signature: sig}, t0)
	if !errors.Is(err, ErrVoteTime) {
		t.Fatalf("a vote dated 2m ahead: err = %v, want ErrVoteTime", err)
	}
	if !strings.Contains(err.Error(), "2m0s ahead") {
		t.Errorf("the refusal %q does not say how far ahead the vote is (2m0s)", err)
	}
	// Within the skew it counts: a clock a few seconds fast is no fault.
	at = t0.Add(30 * time.Second)
	voter, sig = SignVote(key, node, id, gen.VoteChoiceOppose, at)
	if err := VerifyVote(node, id, Vote{Pubkey: voter, Vote: gen.VoteChoiceOppose, Time: at, Signature: sig}, t0); err != nil {
		t.Errorf("a vote 30s ahead: %v, want it accepted", err)
	}
}
