package tools

import (
	"context"
	"fmt"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/served"
)

// 10,000 addresses each send one invalid proposal (a category the
// registry does not have): none is charged, so the limiter's table does
// not fill and a fresh client's valid proposal is recorded.
func TestInvalidProposalsFromManyAddressesLeaveRoomForANewcomer(t *testing.T) {
	h := proposalNode(t, newKey(t), pkarr.Public(newKey(t)), proposals.Options{}, 10)
	invalid := &gen.ProposeChangeInput{Action: "report_dead_source", Slug: "no-such-category", Rank: ptr(1), Reason: "gone"}
	for i := range 10000 {
		ctx := served.WithClient(context.Background(), served.Client{Addr: fmt.Sprintf("10.%d.%d.1", i/256, i%256)})
		if out, err := h.ProposeChange(ctx, invalid); err == nil || out != nil && out.Recorded {
			t.Fatalf("invalid proposal %d was recorded", i)
		}
	}
	ctx := served.WithClient(context.Background(), served.Client{Addr: "192.0.2.7"})
	propose(t, h, ctx, &gen.ProposeChangeInput{Action: "report_dead_source", Slug: "topic", Rank: ptr(1), Reason: "gone"})
}
