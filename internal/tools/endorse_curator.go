package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// EndorseCurator implements gen.ToolHandlers: curation.Node.Endorse, the
// workflow 3gs endorse runs on the file when no server holds it, and
// asks this tool for over the local channel when one does.
func (h *Handlers) EndorseCurator(ctx context.Context, in *gen.EndorseCuratorInput) (*gen.EndorseCuratorOutput, error) {
	state := func(s store.Served, action gen.EndorseCuratorOutputAction) *gen.EndorseCuratorOutput {
		return &gen.EndorseCuratorOutput{Pubkey: in.Pubkey, Action: action, RegistryVersion: s.Registry.Version(), RegistrySHA256: s.Registry.SHA256(), Signed: s.Signature.Verified}
	}
	remove := in.Remove != nil && *in.Remove
	switch {
	case remove && (in.URL != nil || in.Name != nil || in.Since != nil):
		return nil, strictjson.Errors{{Path: "remove", Reason: "a removal takes the key alone: drop url, name and since, or drop remove to add or change an endorsement"}}
	case in.Remove != nil && !remove:
		return nil, strictjson.Errors{{Path: "remove", Reason: "false asks for nothing: leave it out to add or change an endorsement, or give true to remove one"}}
	case !remove && in.URL == nil:
		return nil, strictjson.Errors{{Path: "url", Reason: "required to add or change an endorsement: where their registry is, e.g. https://their.host"}}
	case !remove:
		if _, _, err := peer.Locate(*in.URL); err != nil {
			return nil, strictjson.Errors{{Path: "url", Reason: err.Error()}}
		}
	}
	if h.node == nil {
		return nil, editFailure(h.noFile(), state(h.cur.Load().served(), gen.EndorseCuratorOutputActionUnchanged))
	}
	who := auth.CallerFrom(ctx).Name
	done, err := h.node.Endorse(curation.Endorsement{Pubkey: in.Pubkey, URL: deref(in.URL), Name: deref(in.Name), Since: deref(in.Since), Remove: remove, Actor: who})
	var (
		own *curation.OwnCuratorError
		ne  *curation.NotEndorsedError
		un  *curation.UnchangedError
	)
	switch {
	case errors.As(err, &un):
		out := state(h.cur.Load().served(), gen.EndorseCuratorOutputActionUnchanged)
		endorsementOut(out, un.Endorsement)
		return out, nil
	case errors.As(err, &own):
		return nil, strictjson.Errors{{Path: "pubkey", Reason: "this is the registry's own curator key; a registry does not endorse its own curator"}}
	case errors.As(err, &ne):
		return nil, editFailure(fmt.Sprintf("The registry does not endorse %s, so there is nothing to remove; get_endorsements lists those it does", in.Pubkey), state(h.cur.Load().served(), gen.EndorseCuratorOutputActionUnchanged))
	case err != nil:
		return nil, editFailure("Cannot change the registry: "+storeProblem(err), state(h.cur.Load().served(), gen.EndorseCuratorOutputActionUnchanged))
	}
	action := map[curation.EndorseKind]gen.EndorseCuratorOutputAction{curation.Added: gen.EndorseCuratorOutputActionAdded, curation.Updated: gen.EndorseCuratorOutputActionUpdated, curation.Removed: gen.EndorseCuratorOutputActionRemoved}[done.Kind]
	out := state(done.New, action)
	if done.Kind == curation.Removed {
		out.Name = done.Endorsement.Name
	} else {
		endorsementOut(out, done.Endorsement)
	}
	return out, nil
}

// endorsementOut fills out with what the endorsement e lists.
func endorsementOut(out *gen.EndorseCuratorOutput, e gen.Endorsement) {
	out.URL, out.Since, out.Name = ptr(e.URL), ptr(e.Since), e.Name
}

// EndorseCuratorText implements gen.ToolHandlers.
func (h *Handlers) EndorseCuratorText(out *gen.EndorseCuratorOutput) string {
	who := out.Pubkey
	if out.Name != nil {
		who = *out.Name + " (" + out.Pubkey + ")"
	}
	signed := "The file is not signed."
	if out.Signed {
		signed = "The file is signed with the curator key."
	}
	switch out.Action {
	case gen.EndorseCuratorOutputActionUnchanged:
		return fmt.Sprintf("The registry already endorses %s at %s since %s; nothing changed.", who, deref(out.URL), deref(out.Since))
	case gen.EndorseCuratorOutputActionRemoved:
		return fmt.Sprintf("Removed the endorsement of %s, recorded in the audit log. Registry version %s, SHA-256 %s. %s", who, out.RegistryVersion, out.RegistrySHA256, signed)
	case gen.EndorseCuratorOutputActionUpdated:
		return fmt.Sprintf("Updated the endorsement of %s: at %s, since %s; recorded in the audit log. Registry version %s, SHA-256 %s. %s", who, deref(out.URL), deref(out.Since), out.RegistryVersion, out.RegistrySHA256, signed)
	}
	return fmt.Sprintf("Endorsed %s at %s, since %s; recorded in the audit log. Registry version %s, SHA-256 %s. %s", who, deref(out.URL), deref(out.Since), out.RegistryVersion, out.RegistrySHA256, signed)
}
