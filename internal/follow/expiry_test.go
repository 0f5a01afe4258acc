package follow

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/signature"
)

// The copy served expires while the origin is down: from that moment,
// without any check having run, the state says expired;
// a check that still cannot reach the origin keeps it so; a copy the
// origin signs again serves again, and a signature older than the one
// held is refused.
func TestServedCopyExpires(t *testing.T) {
	key, _ := curatorkey.Generate()
	o := newOrigin(t)
	v := version(t, key, "4.0.0")
	expires := clock.Add(time.Hour)
	o.set(v, signature.SignWith(v, key, clock, signature.Options{Expires: expires}))
	h := newHarness(t, o, curatorkey.Public(key), t.TempDir())
	if _, err := h.f.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	o.setDown()
	h.now = expires.Add(-time.Second)
	if st := h.f.State(); st.Expired {
		t.Fatalf("a second before the expiry: %+v", st)
	}
	h.now = expires
	st := h.f.State()
	if !st.Expired || st.Served == nil || !st.Served.Expires.Equal(expires) || st.Status != Fresh {
		t.Fatalf("at the expiry: %+v", st)
	}
	h.f.check(context.Background())
	if st := h.f.State(); !st.Expired || st.Status != Unreachable {
		t.Fatalf("a failed check after the expiry: %+v", st)
	}

	// An older signature of the same bytes is a rollback, and changes
	// nothing; a newer one serves again.
	h.now = expires.Add(time.Minute)
	o.set(v, signature.SignWith(v, key, clock.Add(-time.Hour), signature.Options{Expires: h.now.Add(24 * time.Hour)}))
	h.f.check(context.Background())
	if st := h.f.State(); st.Status != Refused || !st.Expired || !strings.Contains(st.Reason, "rollback: the signature was made at") || len(h.published) != 0 {
		t.Fatalf("an older signature: %+v, %d published", st, len(h.published))
	}
	o.set(v, signature.SignWith(v, key, h.now, signature.Options{Expires: h.now.Add(24 * time.Hour)}))
	h.f.check(context.Background())
	if st := h.f.State(); st.Status != Fresh || st.Expired || st.Reason != "" || len(h.published) != 1 {
		t.Fatalf("a fresh signature: %+v, %d published", st, len(h.published))
	}
}
