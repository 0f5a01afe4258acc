package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// GetProvenance implements gen.ToolHandlers.
func (h *Handlers) GetProvenance(ctx context.Context, _ *gen.GetProvenanceInput) (*gen.GetProvenanceOutput, error) {
	s := h.cur.Load()
	files := s.files
	if base, ok := auth.BaseURL(ctx); ok {
		files = signature.Remote(base)
	}
	cur := s.reg.Curator()
	curatorKey, configured := s.reg.CuratorKey()
	st := h.signatureNow(s)
	out := &gen.GetProvenanceOutput{
		Curator:          gen.Curator{Name: cur.Name, Pubkey: cur.Pubkey},
		PubkeyConfigured: configured,
		Version:          s.reg.Version(),
		Updated:          s.reg.Updated(),
		CategoryCount:    len(s.reg.Categories()),
		EndorsementCount: len(s.reg.Endorsements()),
		RegistrySHA256:   s.reg.SHA256(),
		Signed:           st.Signed(),
		Verified:         st.Verified,
	}
	if st.Signer != nil {
		out.SignedBy = ptr(curatorkey.URI(st.Signer))
	}
	signedAt := st.SignedAt.UTC().Format(time.RFC3339)
	if !st.SignedAt.IsZero() {
		out.SignedAt = ptr(signedAt)
	}
	if (st.Verified || st.Expired) && !st.Expires.IsZero() {
		out.Expires = ptr(second(st.Expires))
	}
	if st.Expired {
		out.Expired = ptr(true)
	}
	var ins signature.Instructions
	switch {
	case st.Verified:
		out.SignatureDetail = "Signed by the curator's key " + cur.Pubkey + " at " + signedAt + "; the signature is valid for the exact bytes served."
		files.Statement = !st.Expires.IsZero()
		ins = signature.SignedInstructions(curatorKey, s.reg.SHA256(), files)
	case st.Expired:
		out.SignatureDetail = "EXPIRED: signed by the curator's key " + cur.Pubkey + " at " + signedAt + ", but the signature stopped vouching for the registry at " + out.Expires.Format(time.RFC3339) + ", so it is not verified and the registry's content is not served (an expired copy is what a freeze or rollback replays). The curator signs it again with 3gs sign."
		files.Statement = true
		ins = signature.SignedInstructions(curatorKey, s.reg.SHA256(), files)
	case st.Signed():
		out.SignatureDetail = "NOT VERIFIED: " + st.Problem.Error() + ". Do not rely on this registry's origin until its curator re-signs it."
		ins = signature.UnsignedInstructions(s.reg.SHA256(), files)
	case configured:
		out.SignatureDetail = "Unsigned: the registry names curator key " + cur.Pubkey + ", but no signature file accompanies it, so nothing proves the curator wrote these bytes."
		ins = signature.UnsignedInstructions(s.reg.SHA256(), files)
	default:
		out.SignatureDetail = "Unsigned: the registry has no curator key yet (" + registry.Placeholder + "), so it cannot be signed; the digest only shows which bytes are served."
		ins = signature.UnsignedInstructions(s.reg.SHA256(), files)
	}
	out.Verification = gen.Verification{Where: ins.Where, Steps: []gen.VerificationStep{}}
	if ins.Command != "" {
		out.Verification.Command = ptr(ins.Command)
	}
	for _, s := range ins.Steps {
		out.Verification.Steps = append(out.Verification.Steps, gen.VerificationStep{What: s.What, Run: s.Run, Expect: s.Expect})
	}
	return out, nil
}

// GetProvenanceText implements gen.ToolHandlers.
func (h *Handlers) GetProvenanceText(out *gen.GetProvenanceOutput) string {
	var b strings.Builder
	key := out.Curator.Pubkey
	if !out.PubkeyConfigured {
		key = "none yet (" + key + ")"
	}
	state := "no"
	switch {
	case out.Verified:
		state = "yes, verified"
	case deref(out.Expired):
		state = "EXPIRED, not verified"
	case out.Signed:
		state = "present but NOT VERIFIED"
	}
	fmt.Fprintf(&b, "Curator: %s\nPublic Key: %s\nRegistry Version: %s\nLast Updated: %s\nCategories: %d\nEndorsements: %d\nRegistry SHA-256: %s\nSignature: %s\n%s\n",
		registry.Visible(out.Curator.Name), key, out.Version, out.Updated, out.CategoryCount, out.EndorsementCount, out.RegistrySHA256, state, out.SignatureDetail)
	v := out.Verification
	b.WriteString("\nVerify it yourself\n")
	if v.Command != nil {
		b.WriteString("With 3gs: " + *v.Command + "\n")
	}
	if v.Where != "" {
		b.WriteString("Files: " + v.Where + "\n")
	}
	if v.Command != nil {
		b.WriteString("Without 3gs, in a POSIX shell:\n")
	}
	for i, s := range v.Steps {
		fmt.Fprintf(&b, "%d. %s\n   $ %s\n   Expect: %s\n", i+1, s.What, s.Run, s.Expect)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
