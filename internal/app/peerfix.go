package app

import (
	"errors"
	"fmt"

	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/peer"
)

// PeerFix says what the operator of 3gs serve can do, in serve's flags,
// about a peer's or the followed origin's copy that was not taken
// (internal/peer, internal/follow), or "" when nothing of serve's
// configuration changes it: an expired signature is accepted with
// --allow-expired, a larger registry with a higher --peer-max-bytes, a
// slow peer with a longer --peer-timeout. 3gs doctor, which fetches
// with serve's bounds, words its findings with it too.
func PeerFix(err error) string {
	var r *peer.Refusal
	var te *peer.TimeoutError
	switch {
	case errors.As(err, &te):
		return fmt.Sprintf("--peer-timeout (THREEGS_PEER_TIMEOUT) allows %s for the whole fetch", te.Timeout)
	case errors.As(err, &r) && r.Public == peer.RefusedExpired:
		return "to accept it anyway, start 3gs serve with --allow-expired"
	case errors.As(err, &r) && r.Public == fetch.RefusedTooLarge && r.MaxBytes > 0:
		return "a larger registry is accepted with a higher --peer-max-bytes (THREEGS_PEER_MAX_BYTES)"
	}
	return ""
}
