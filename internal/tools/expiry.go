package tools

import (
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/signature"
)

// A signature expires while its registry is served: a read replica whose
// origin went down keeps the copy it last took, and a server without the
// curator key keeps the file it started with. Past the expiry the copy is
// what a freeze or rollback attack would replay, so, with expiry enforced
// (Config.EnforceExpiry), the tools that answer from the registry refuse
// with withheld, get_provenance and /health report the signature expired
// and not verified, and a fresh signature (a replica's next good copy, a
// reload of a re-signed file) serves again. Nothing is decided at swap
// time: the clock is read on every call, so the refusal starts the moment
// the signature expires, whether or not anything was fetched since.

// signatureNow is s's signature status at this moment: expired, and so
// not verified, once its expiry has passed while expiry is enforced.
func (h *Handlers) signatureNow(s *snapshot) signature.Status {
	if !h.expiry {
		return s.signature
	}
	return s.signature.At(h.now())
}

// withheld is the error a tool that answers from the registry returns
// when the registry's signature has expired (structured is the tool's
// empty output), or nil when it may answer.
func (h *Handlers) withheld(s *snapshot, structured any) error {
	return h.withheldAt(h.signatureNow(s), structured)
}

// withheldAt is withheld for the signature's status st, as signatureNow
// gave it.
func (h *Handlers) withheldAt(st signature.Status, structured any) error {
	if !st.Expired {
		return nil
	}
	return &gen.ToolError{Text: h.expiredText(st), Structured: structured}
}

// expiredText says that the registry's signature expired, when, and what
// the operator does about it.
func (h *Handlers) expiredText(st signature.Status) string {
	when := st.Expires.UTC().Format(time.RFC3339)
	text := "This server's registry is not served: its curator's signature expired at " + when + ", and a registry past its signature's expiry is what a freeze or rollback attack replays, so nothing is answered from it. "
	if h.origin != "" {
		return text + "This is a read replica of " + h.origin + ", which has not given it a copy with a signature in force; its operator brings the origin back, or the curator signs the registry again there (3gs sign), and the replica serves again at its next check."
	}
	return text + "Its operator has the curator sign the registry again (3gs sign) and reloads it (reload_registry or a restart); --allow-expired serves it anyway."
}

// olderSignature says why the verified signature next, about to replace
// the verified signature held, is older than it ("" when it is not): an
// older valid signature for the same bytes and log head verifies as well
// as the newer one but expires sooner, so putting it back would end the
// registry's service early, or, kept for later, carry an old copy. The
// peer and follow paths refuse the same (peer.Accept).
func olderSignature(held, next signature.Status) string {
	if !held.Verified || !next.Verified {
		return ""
	}
	if !next.SignedAt.Before(held.SignedAt) {
		return ""
	}
	return "was made at " + next.SignedAt.UTC().Format(time.RFC3339) + ", before the signature of the registry being served (" + held.SignedAt.UTC().Format(time.RFC3339) + "). An older signature put back is not loaded; the curator signs again (3gs sign), which makes a later one."
}
