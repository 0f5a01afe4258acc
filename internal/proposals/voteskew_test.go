package proposals

import (
	"errors"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/pkarr"
)

// A vote dated ahead outranks the voter's later honest ones until the
// node's clock reaches it, so more than a minute ahead is refused.
func TestVoteDatedAheadIsRefused(t *testing.T) {
	key, _ := pkarr.Generate()
	id := NewID()
	for ahead, refused := range map[time.Duration]bool{59 * time.Second: false, 61 * time.Second: true, 4 * time.Minute: true} {
		at := t0.Add(ahead)
		voter, sig := SignVote(key, "pk:node", id, VoteOppose, at)
		err := VerifyVote("pk:node", id, Vote{Pubkey: voter, Vote: VoteOppose, Time: at, Signature: sig}, t0)
		if got := errors.Is(err, ErrVoteTime); got != refused {
			t.Errorf("a vote %s ahead: %v; want refused %v", ahead, err, refused)
		}
	}
}
