package proposals

import (
	"github.com/three-good-sources/3gs/gen"

	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/three-good-sources/3gs/internal/curatorkey"
)

// Bounds on a vote's time: a statement signed longer ago than MaxVoteAge,
// or more than MaxVoteSkew ahead of the node's clock, is refused, so a
// vote seen once (in a log, on the wire) cannot be submitted again later
// to undo a newer one. The skew is short because a vote dated ahead
// outranks the voter's honest votes until the clock reaches it: a minute
// covers clocks kept by NTP, and blocks no one for long.
const (
	MaxVoteAge  = 15 * time.Minute
	MaxVoteSkew = time.Minute
)

// Statement is what a voter signs: the format's name, the node the vote is
// for (its curator key, so it counts on that node only), the voter's key,
// the proposal, the vote and when it was cast (RFC 3339, UTC, seconds).
func Statement(node, voter, id string, vote gen.VoteChoice, at time.Time) []byte {
	return fmt.Appendf(nil, "3gs vote v1\nnode: %s\nvoter: %s\nproposal: %s\nvote: %s\ntime: %s\n",
		node, voter, id, vote, at.UTC().Format(time.RFC3339))
}

// SignVote signs a vote with key for the node whose curator key is node;
// it returns the voter's key (pk:…) and the signature (standard base64).
func SignVote(key ed25519.PrivateKey, node, id string, vote gen.VoteChoice, at time.Time) (voter, sig string) {
	voter = curatorkey.URI(curatorkey.Public(key))
	s := ed25519.Sign(key, Statement(node, voter, id, vote, at))
	return voter, base64.StdEncoding.EncodeToString(s)
}

// ErrVoteTime is wrapped by VerifyVote's error for a statement signed too
// long ago or in the future.
var ErrVoteTime = errors.New("the vote's time is out of bounds")

// VerifyVote checks v, a vote for proposal id on the node whose curator
// key is node, at now: its time within bounds and its signature by
// v.Pubkey. Whether that key may vote (one the node endorses) is the
// caller's to check.
func VerifyVote(node, id string, v Vote, now time.Time) error {
	if v.Vote != gen.VoteChoiceSupport && v.Vote != gen.VoteChoiceOppose {
		return fmt.Errorf("a vote is %s or %s, not %q", gen.VoteChoiceSupport, gen.VoteChoiceOppose, v.Vote)
	}
	if v.Time.Before(now.Add(-MaxVoteAge)) {
		return fmt.Errorf("%w: it was signed at %s, more than %s before this node's clock (%s); sign it again", ErrVoteTime, v.Time.UTC().Format(time.RFC3339), MaxVoteAge, now.UTC().Format(time.RFC3339))
	}
	if v.Time.After(now.Add(MaxVoteSkew)) {
		return fmt.Errorf("%w: it is dated %s, %s ahead of this node's clock (%s), more than the %s allowed; set the voter's clock right (NTP) and sign it again", ErrVoteTime, v.Time.UTC().Format(time.RFC3339), v.Time.Sub(now).Round(time.Second), now.UTC().Format(time.RFC3339), MaxVoteSkew)
	}
	if !v.Time.Equal(v.Time.Truncate(time.Second)) {
		return fmt.Errorf("%w: a vote's time is in whole seconds, as the statement writes it", ErrVoteTime)
	}
	pub, err := curatorkey.ParsePublicKey(v.Pubkey)
	if err != nil {
		return fmt.Errorf("the voter's key: %w", err)
	}
	// Strict: the one way to write 64 bytes, so that a vote seen once
	// cannot be sent again as another string with the same signature.
	sig, err := base64.StdEncoding.Strict().DecodeString(v.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return errors.New("the signature is not 64 bytes of standard base64, written the one way base64 writes them")
	}
	if !ed25519.Verify(pub, Statement(node, curatorkey.URI(pub), id, v.Vote, v.Time), sig) {
		return errors.New("the signature does not verify: it was not made by this key over this vote for this proposal on this node (the statement names the node's curator key, the voter, the proposal, the vote and the time)")
	}
	return nil
}
