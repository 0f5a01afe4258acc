package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/peer"
)

// What internal/peer reports as data, serve's operator reads in serve's
// flags: --allow-expired for an expired signature, --peer-max-bytes for
// a registry over the fetcher's limit (not for one refused by its shape,
// which no limit lets in), --peer-timeout with the time it allowed. A
// refusal nothing of serve's changes gets no fix.
func TestPeerFixNamesServesFlags(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("peer: %w", &peer.Refusal{Reason: "the signature expired at ...", Public: peer.RefusedExpired}),
			"to accept it anyway, start 3gs serve with --allow-expired"},
		{&peer.Refusal{Reason: "registry over the 1024-byte limit", Public: fetch.RefusedTooLarge, MaxBytes: 1024},
			"a larger registry is accepted with a higher --peer-max-bytes (THREEGS_PEER_MAX_BYTES)"},
		{&peer.TimeoutError{Timeout: 300 * time.Millisecond, Err: context.DeadlineExceeded},
			"--peer-timeout (THREEGS_PEER_TIMEOUT) allows 300ms for the whole fetch"},
		{&peer.Refusal{Reason: "registry: 900 of its 1000 bytes are whitespace", Public: fetch.RefusedTooLarge}, ""},
		{&peer.Refusal{Reason: "rollback", Public: peer.RefusedRollback}, ""},
		{context.Canceled, ""},
	} {
		if got := PeerFix(c.err); got != c.want {
			t.Errorf("PeerFix(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
