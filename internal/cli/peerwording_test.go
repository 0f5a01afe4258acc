package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/peer"
)

// internal/peer reports a fetch out of time and an expired signature as
// data; the commands word them with their own flags: doctor, which
// fetches with serve's bounds, with serve's, and audit fetch with its
// own --timeout (not serve's --peer-timeout, which it does not take).
func TestPeerFailuresNameTheCommandsFlags(t *testing.T) {
	slow := &peer.TimeoutError{Timeout: 2 * time.Second, Err: context.DeadlineExceeded}
	if got := peerProblem(slow); !strings.Contains(got, "(the whole fetch may take 2s); --peer-timeout (THREEGS_PEER_TIMEOUT) allows 2s") {
		t.Errorf("doctor, a slow peer: %q", got)
	}
	expired := &peer.Refusal{Reason: "the signature expired at 2026-01-01T00:00:00Z", Public: peer.RefusedExpired}
	if got := peerProblem(expired); got != "the signature expired at 2026-01-01T00:00:00Z; to accept it anyway, start 3gs serve with --allow-expired" {
		t.Errorf("doctor, an expired peer: %q", got)
	}
	var stderr bytes.Buffer
	fetchFailed(&Env{Stderr: &stderr}, "3gs audit fetch", "https://replica.example", slow, 2*time.Minute)
	if got := stderr.String(); !strings.Contains(got, "allow more than 2m0s with --timeout (THREEGS_AUDIT_TIMEOUT)") || strings.Contains(got, "--peer-timeout") {
		t.Errorf("audit fetch, a slow node:\n%s", got)
	}
	stderr.Reset()
	fetchFailed(&Env{Stderr: &stderr}, "3gs audit fetch", "https://replica.example", expired, 2*time.Minute)
	if got := stderr.String(); strings.Contains(got, "--timeout") || !strings.Contains(got, "Nothing was written.\nFix: check that https://replica.example answers") {
		t.Errorf("audit fetch, a refusal:\n%s", got)
	}
}
