package peer

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
)

// healthDoc says of the peer registry's first source that it is gone,
// and of a URL the registry does not list that it is ok.
func healthDoc(checkedAt time.Time) *gen.Sourcehealth {
	at := checkedAt.UTC().Truncate(time.Second)
	return &gen.Sourcehealth{
		CheckedAt: at, RegistryVersion: "1.0.0",
		Summary: gen.SourcehealthSummary{Ok: 1, Gone: 1},
		Sources: []gen.CheckedSource{
			{Category: "git-version-control", Rank: 1, URL: "https://git-scm.com/book/en/v2", Status: gen.CheckStatusGone, CheckedAt: at},
			{Category: "elsewhere", Rank: 1, URL: "https://not-listed.example/", Status: gen.CheckStatusOk, CheckedAt: at},
		},
	}
}

// serveHealth makes the peer server publish p at the node paths.
func (h *harness) serveHealth(p sourcehealth.Published) {
	h.srv.answerOther(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/registry"+sourcehealth.Suffix && p.Data != nil:
			w.Write(p.Data)
		case r.URL.Path == "/registry"+sourcehealth.Suffix+sourcehealth.SigSuffix && p.Signature != nil:
			w.Write(p.Signature)
		default:
			http.NotFound(w, r)
		}
	})
}

func (h *harness) signedHealth(key testCurator, checkedAt time.Time) sourcehealth.Published {
	return sourcehealth.Sign(healthDoc(checkedAt), key.key, h.clock.Now(), sourcehealth.Validity(0))
}

func TestPeerHealthAccepted(t *testing.T) {
	h := newHarness(t, nil)
	h.endorse()
	h.serveHealth(h.signedHealth(h.peer, h.clock.Now().Add(-time.Hour)))
	p := h.accept("1.0.0")
	if p.Health == nil {
		t.Fatalf("no health accepted; log:\n%s", h.log)
	}
	if e, ok := p.Health.Index.Lookup("https://git-scm.com/book/en/v2"); !ok || e.Status != "gone" {
		t.Errorf("the listed source: %+v, %v; want gone", e, ok)
	}
	if _, ok := p.Health.Index.Lookup("https://not-listed.example/"); ok {
		t.Error("a URL the peer's registry does not list was kept")
	}
}

// Each way a health file must be refused leaves the peer without one,
// while its registry is still accepted.
func TestPeerHealthRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(h *harness) sourcehealth.Published
	}{
		{"signed by another key", func(h *harness) sourcehealth.Published {
			return h.signedHealth(h.own, h.clock.Now())
		}},
		{"unsigned", func(h *harness) sourcehealth.Published {
			return sourcehealth.Sign(healthDoc(h.clock.Now()), nil, h.clock.Now(), 0)
		}},
		{"a registry signature passed off as a health file's", func(h *harness) sourcehealth.Published {
			p := sourcehealth.Sign(healthDoc(h.clock.Now()), nil, h.clock.Now(), 0)
			p.Signature = signature.Sign(p.Data, h.peer.key, h.clock.Now())
			return p
		}},
		{"expired", func(h *harness) sourcehealth.Published {
			return sourcehealth.Sign(healthDoc(h.clock.Now()), h.peer.key, h.clock.Now().Add(-48*time.Hour), 24*time.Hour)
		}},
		{"checked in the future", func(h *harness) sourcehealth.Published {
			return h.signedHealth(h.peer, h.clock.Now().Add(time.Hour))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.endorse()
			h.serveHealth(tc.make(h))
			p := h.accept("1.0.0")
			if p.Health != nil {
				t.Fatalf("health accepted: %+v", p.Health)
			}
			if !strings.Contains(h.log.String(), "peer source health not updated") {
				t.Errorf("the refusal is not logged:\n%s", h.log)
			}
		})
	}
}

// An older health file than the one accepted (a rollback that would
// bring a dead source back to life) is refused, and the newer one kept.
func TestPeerHealthRollbackKeepsNewer(t *testing.T) {
	h := newHarness(t, nil)
	h.endorse()
	newer := h.clock.Now().Add(-time.Hour)
	h.serveHealth(h.signedHealth(h.peer, newer))
	h.accept("1.0.0")
	h.serveHealth(h.signedHealth(h.peer, newer.Add(-24*time.Hour)))
	p := h.accept("1.1.0")
	if p.Health == nil || !p.Health.CheckedAt.Equal(newer) {
		t.Fatalf("after a rollback: %+v; want the newer file kept", p.Health)
	}
	if !strings.Contains(h.log.String(), "before the") {
		t.Errorf("the rollback is not logged:\n%s", h.log)
	}
}

// A peer that publishes no health file has none, and nothing is logged
// as wrong.
func TestPeerWithoutHealth(t *testing.T) {
	h := newHarness(t, nil)
	h.endorse()
	p := h.accept("1.0.0")
	if p.Health != nil || strings.Contains(h.log.String(), "source health") {
		t.Errorf("health %+v; log:\n%s", p.Health, h.log)
	}
}
