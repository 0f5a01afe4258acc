package peer

import "time"

// signedNoEarlier refuses c when its signature was made before that of
// last, the copy accepted before it. Each signature the curator makes
// (a change, or a renewal of an unchanged registry) is later than the
// one before, so an earlier one is an old signature put back: for the
// same bytes and log head it verifies as well as the newer one, but
// expires sooner, and accepting it would let whoever replays it shorten
// how long the copy is served, or, kept until then, bring back a copy
// the curator has since changed. A signature made in the same second is
// not earlier (3gs writes signed_at to the second). A curator whose clock
// went back is refused until it catches up with the last signature.
func signedNoEarlier(last, c *Copy) error {
	if last.signedAt.IsZero() || c.signedAt.IsZero() || !c.signedAt.Before(last.signedAt) {
		return nil
	}
	return refuseAs(RefusedRollback, "rollback: the signature was made at %s, before the one accepted (made at %s); an older signature put back does not replace a newer one, and the curator's next signature will be later", c.signedAt.UTC().Format(time.RFC3339), last.signedAt.UTC().Format(time.RFC3339))
}
