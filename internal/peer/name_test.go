package peer

import (
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
)

// A peer whose curator name reads as ours ("A peer curator" against
// "A Peer Curatοr", with a Greek omicron) is refused with a coarse
// reason, and its names go to the log.
func TestRefusedNameLikeOurs(t *testing.T) {
	h := newHarness(t, nil)
	h.net.SetOwnName("A Peer Curat\u03bfr.")
	h.endorse()
	h.srv.publish(h.peer.signed("1.0.0", ""))
	h.refresh()
	p := h.only()
	wantOutcome(t, p, Refused, NameLikeOurs)
	if p.Copy != nil || p.Matcher != nil {
		t.Errorf("a copy was accepted: %+v", p.Copy)
	}
	if p.Reason != NameLikeOurs {
		t.Errorf("reason %q, want only %q", p.Reason, NameLikeOurs)
	}
	if log := h.log.String(); !strings.Contains(log, `their_name="\"A peer curator\""`) || !strings.Contains(log, `our_name="\"A Peer Curat\\u03bfr.\""`) {
		t.Errorf("the log does not name both names:\n%s", log)
	}
}

// A name that only shares words with ours is accepted; once we take a
// name the peer's reads as, its next copy is refused and the last one
// keeps serving; a restart refuses the cached copy too.
func TestNameLikeOursAfterRename(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, func(c *Config) { c.CacheDir = dir })
	h.net.SetOwnName("Another peer curator")
	acceptThenFail(t, h, func(h *harness) {
		h.net.SetOwnName("a-peer-curator")
		h.srv.publish(h.peer.signed("1.1.0", ""))
	}, Refused, NameLikeOurs)

	again := h.newNetwork(func(c *Config) { c.CacheDir = dir })
	again.SetOwnName("A peer curator")
	again.SetEndorsements(h.own.uri, []gen.Endorsement{h.endorsement()})
	p := only(t, again)
	wantOutcome(t, p, Refused, "cached copy "+NameLikeOurs)
	if p.Copy != nil {
		t.Error("the cached copy serves")
	}
}
