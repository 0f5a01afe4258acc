package proposals

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
)

// DecisionStatement is what a node's curator key signs when the node
// decides a proposal: the format's name, the node (its curator key, so a
// decision counts for that node's registry only), the proposal, the
// status decided and the decision's time, actor, reason and registry
// version. The reason is quoted, so no text in it can pass for another
// line of the statement; an absent reason or version is written "".
func DecisionStatement(node, id string, status gen.ProposalStatus, d Decision) []byte {
	reason, version := "", ""
	if d.Reason != nil {
		reason = *d.Reason
	}
	if d.Version != nil {
		version = *d.Version
	}
	return fmt.Appendf(nil, "3gs decision v1\nnode: %s\nproposal: %s\nstatus: %s\ntime: %s\nactor: %s\nreason: %s\nversion: %s\n",
		node, id, status, d.Time.UTC().Format(time.RFC3339), strconv.Quote(d.Actor), strconv.Quote(reason), strconv.Quote(version))
}

// signDecision sets d's signature: key's, over the statement of proposal
// id decided as status on the node whose curator key is key's.
func signDecision(key ed25519.PrivateKey, id string, status gen.ProposalStatus, d *Decision) {
	d.Signature = nil
	node := curatorkey.URI(curatorkey.Public(key))
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(key, DecisionStatement(node, id, status, *d)))
	d.Signature = &sig
}

// ErrUnsigned is VerifyDecision's error for a decision made by a node
// that held no key.
var ErrUnsigned = errors.New("the decision is not signed: the node that made it held no curator key")

// VerifyDecision checks that p's decision is signed by node, the curator
// key (pk:…) of the registry p was proposed to, over what it says.
func VerifyDecision(node string, p *Proposal) error {
	d := p.Decision
	if d == nil {
		return errors.New("the proposal is not decided")
	}
	if d.Signature == nil {
		return ErrUnsigned
	}
	pub, err := curatorkey.ParsePublicKey(node)
	if err != nil {
		return fmt.Errorf("the node's key: %w", err)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(*d.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return errors.New("the decision's signature is not 64 bytes of standard base64")
	}
	if !ed25519.Verify(pub, DecisionStatement(curatorkey.URI(pub), p.ID, p.Status, *d), sig) {
		return errors.New("the decision's signature does not verify: it was not made by this node's curator key over this decision (the statement names the node, the proposal, its status and the decision's time, actor, reason and version)")
	}
	return nil
}

// SignDecisions makes s sign each decision it records from now on with
// key, the curator key of the registry s holds the proposals of; nil
// leaves them unsigned.
func (s *File) SignDecisions(key ed25519.PrivateKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}
