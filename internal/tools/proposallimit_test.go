package tools

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/proposals"
)

// 10,000 addresses each send one invalid proposal (a category the
// registry does not have): none is charged, so the limiter's table does
// not fill and a fresh client's valid proposal is recorded.
func TestInvalidProposalsFromManyAddressesLeaveRoomForANewcomer(t *testing.T) {
	h := proposalNode(t, newKey(t), curatorkey.Public(newKey(t)), proposals.Options{}, 10)
	invalid := &gen.ProposeChangeInput{Action: "report_dead_source", Slug: "no-such-category", Rank: ptr(1), Reason: "gone"}
	for i := range 10000 {
		ctx := auth.WithClient(context.Background(), auth.Client{Addr: fmt.Sprintf("10.%d.%d.1", i/256, i%256)})
		if out, err := h.ProposeChange(ctx, invalid); err == nil || out != nil && out.Recorded {
			t.Fatalf("invalid proposal %d was recorded", i)
		}
	}
	ctx := auth.WithClient(context.Background(), auth.Client{Addr: "192.0.2.7"})
	propose(t, h, ctx, &gen.ProposeChangeInput{Action: "report_dead_source", Slug: "topic", Rank: ptr(1), Reason: "gone"})
}

// One client's invalid proposals each cost a registry check, so they have
// an allowance of their own, InvalidFactor times --proposal-rate: past it
// the client is refused before the check, in words that say it was
// invalid proposals that were counted. Its valid proposals are not
// counted there, nor are other clients held back.
func TestInvalidProposalsHaveAnAllowanceOfTheirOwn(t *testing.T) {
	const rate = 2
	h := proposalNode(t, newKey(t), curatorkey.Public(newKey(t)), proposals.Options{}, rate)
	ctx := auth.WithClient(context.Background(), auth.Client{Addr: "192.0.2.7"})
	invalid := &gen.ProposeChangeInput{Action: "report_dead_source", Slug: "no-such-category", Rank: ptr(1), Reason: "gone"}
	for i := range proposals.InvalidFactor * rate {
		if _, err := h.ProposeChange(ctx, invalid); err == nil || strings.Contains(err.Error(), "invalid proposals in the last hour") {
			t.Fatalf("invalid proposal %d: %v, want its own problem named", i+1, err)
		}
	}
	_, err := h.ProposeChange(ctx, invalid)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("has sent %d invalid proposals in the last hour", proposals.InvalidFactor*rate)) {
		t.Fatalf("invalid proposal %d: %v, want the invalid allowance's refusal", proposals.InvalidFactor*rate+1, err)
	}
	other := auth.WithClient(context.Background(), auth.Client{Addr: "198.51.100.1"})
	propose(t, h, other, &gen.ProposeChangeInput{Action: "report_dead_source", Slug: "topic", Rank: ptr(1), Reason: "gone"})
}

// reject_proposal decides in bulk: by a client's address (an IPv6 client
// by any address of its /64), by a list, or every pending one; the answer
// counts and names them. One form at a time.
func TestRejectProposalInBulk(t *testing.T) {
	h := proposalNode(t, newKey(t), curatorkey.Public(newKey(t)), proposals.Options{}, 10)
	report := &gen.ProposeChangeInput{Action: "report_dead_source", Slug: "topic", Rank: ptr(1), Reason: "gone"}
	from := func(addr string) context.Context {
		return auth.WithClient(context.Background(), auth.Client{Addr: addr})
	}
	a1 := propose(t, h, from("2001:db8:1:2::1"), report)
	a2 := propose(t, h, from("2001:db8:1:2::2"), report)
	b := propose(t, h, from("192.0.2.9"), report)
	c := propose(t, h, from("198.51.100.1"), report)

	out, err := h.RejectProposal(context.Background(), &gen.RejectProposalInput{FromClient: ptr("2001:db8:1:2::99"), Reason: "flood"})
	if err != nil || out.Count != 2 || out.Rejected[0] != a1 || out.Rejected[1] != a2 || out.Status != gen.ProposalStatusRejected {
		t.Fatalf("from_client of the /64: %+v, %v; want %s and %s rejected", out, err, a1, a2)
	}
	if out, err = h.RejectProposal(context.Background(), &gen.RejectProposalInput{Ids: []string{b}, Reason: "no"}); err != nil || out.Count != 1 || out.Rejected[0] != b {
		t.Errorf("ids [%s]: %+v, %v", b, out, err)
	}
	if out, err = h.RejectProposal(context.Background(), &gen.RejectProposalInput{AllPending: ptr(true), Reason: "no"}); err != nil || out.Count != 1 || out.Rejected[0] != c {
		t.Errorf("all_pending: %+v, %v; want [%s]", out, err, c)
	}
	if out, err = h.RejectProposal(context.Background(), &gen.RejectProposalInput{ID: ptr(c), Reason: "no"}); err == nil {
		t.Errorf("rejecting %s again: %+v, want a refusal", c, out)
	}
	for _, args := range []string{
		`{"id":"` + c + `","all_pending":true,"reason":"x"}`,
		`{"reason":"x"}`,
	} {
		if _, err := gen.DecodeRejectProposalInput([]byte(args)); err == nil {
			t.Errorf("%s decoded; want exactly one of id, ids, all_pending, older_than, from_client", args)
		}
	}
	if _, err := gen.DecodeRejectProposalInput([]byte(`{"id":"` + c + `","reason":"x"}`)); err != nil {
		t.Errorf("the single id form: %v", err)
	}
}

// A proposal whose body was dropped after its decision says so, with
// its digest, rather than showing an empty reason as if it were one.
func TestACompactedProposalShowsItsDigest(t *testing.T) {
	now := time.Now()
	h := proposalNode(t, newKey(t), curatorkey.Public(newKey(t)), proposals.Options{Now: func() time.Time { return now }}, 10)
	id := propose(t, h, context.Background(), &gen.ProposeChangeInput{Action: "report_dead_source", Slug: "topic", Rank: ptr(1), Reason: "gone"})
	if _, err := h.RejectProposal(context.Background(), &gen.RejectProposalInput{ID: ptr(id), Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(25 * time.Hour)
	if err := h.props.store.Tidy(); err != nil {
		t.Fatal(err)
	}
	out, err := h.GetProposal(context.Background(), &gen.GetProposalInput{ID: id})
	if err != nil || out.Proposal.Digest == nil || !strings.Contains(h.GetProposalText(out), "The body was dropped after the decision; sha256:") {
		t.Errorf("get_proposal of a compacted proposal: %+v, %v", out, err)
	}
}
