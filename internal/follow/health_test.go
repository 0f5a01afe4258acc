package follow

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
)

// healthOf is a health file for every source of data, the first gone and
// the rest ok, checked at at, plus one source data does not list.
func healthOf(t *testing.T, data []byte, at time.Time) *gen.Sourcehealth {
	t.Helper()
	reg, err := registry.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	doc := &gen.Sourcehealth{CheckedAt: at, RegistryVersion: reg.Version()}
	for i, tg := range sourcehealth.Targets(reg) {
		st := gen.CheckStatusOk
		if i == 0 {
			st = gen.CheckStatusGone
		}
		doc.Sources = append(doc.Sources, gen.CheckedSource{Category: tg.Category, Rank: tg.Rank, URL: tg.URL, Status: st, CheckedAt: at})
	}
	doc.Sources = append(doc.Sources, gen.CheckedSource{Category: "not-listed", Rank: 1, URL: "https://unlisted.example/", Status: gen.CheckStatusGone, CheckedAt: at})
	sourcehealth.Count(doc)
	return doc
}

// A read replica takes the source health its origin publishes, as an
// endorsing server takes a peer's: signed for a health file by the
// origin's key, of the sources its registry lists, not older than the
// last one; so get_sources answers on the replica as on the origin.
// Before, the follower never asked for it: a replica showed no health.
func TestFollowerTakesTheOriginsSourceHealth(t *testing.T) {
	key, _ := curatorkey.Generate()
	other, _ := curatorkey.Generate()
	o := newOrigin(t)
	v := version(t, key, "4.0.0")
	o.set(v, signed(key, v, clock))
	doc := healthOf(t, v, clock.Add(-time.Hour))
	p := sourcehealth.Sign(doc, key, clock.Add(-time.Hour), 7*24*time.Hour)
	o.health, o.healthSig = p.Data, p.Signature

	h := newHarness(t, o, curatorkey.Public(key), t.TempDir())
	var got []*peer.Health
	h.f.SetPublishHealth(func(hh *peer.Health, _ sourcehealth.Published) { got = append(got, hh) })
	if _, err := h.f.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	hh, pub := h.f.Health()
	if hh == nil || len(got) != 1 || got[0] != hh {
		t.Fatalf("the origin's health was not taken: %+v, %d published", hh, len(got))
	}
	first, second := doc.Sources[0], doc.Sources[1]
	if e, ok := hh.Index.Lookup(first.URL); !ok || e.Status != gen.CheckStatusGone {
		t.Errorf("%s: %+v %v, want gone", first.URL, e, ok)
	}
	if e, ok := hh.Index.Lookup(second.URL); !ok || e.Status != gen.CheckStatusOk {
		t.Errorf("%s: %+v %v, want ok", second.URL, e, ok)
	}
	// What the registry does not list is the origin's word about nothing
	// served here: dropped, and not counted.
	if _, ok := hh.Index.Lookup("https://unlisted.example/"); ok {
		t.Error("a source the registry does not list was kept")
	}
	if hh.Summary.Gone != 1 || hh.Summary.Ok != len(doc.Sources)-2 {
		t.Errorf("summary %+v, want 1 gone and %d ok", hh.Summary, len(doc.Sources)-2)
	}
	// Published as it came, so it verifies against the origin's key.
	if string(pub.Data) != string(p.Data) || string(pub.Signature) != string(p.Signature) {
		t.Error("the file published is not the origin's")
	}

	// Refused: another key's signature, the registry's signature passed
	// off as the health file's, and an older check (a rollback). The one
	// taken stays while its signature is in force.
	older := sourcehealth.Sign(healthOf(t, v, clock.Add(-2*time.Hour)), key, clock.Add(-2*time.Hour), 7*24*time.Hour)
	for _, c := range []struct {
		name      string
		data, sig []byte
	}{
		{"another key", p.Data, sourcehealth.Sign(doc, other, clock, time.Hour).Signature},
		{"a registry signature", p.Data, signature.SignWith(p.Data, key, clock, signature.Options{Expires: clock.Add(time.Hour)})},
		{"an older check", older.Data, older.Signature},
	} {
		o.mu.Lock()
		o.health, o.healthSig = c.data, c.sig
		o.mu.Unlock()
		h.now = h.now.Add(time.Minute)
		h.f.check(context.Background())
		if now, _ := h.f.Health(); now != hh || len(got) != 1 {
			t.Errorf("%s: taken (%d published)", c.name, len(got))
		}
	}
	// An origin that stops publishing it has none here either.
	o.mu.Lock()
	o.health, o.healthSig = nil, nil
	o.mu.Unlock()
	h.f.check(context.Background())
	if now, pub := h.f.Health(); now != nil || pub.Data != nil || len(got) != 2 || got[1] != nil {
		t.Errorf("the origin publishes none: %+v, %d published", now, len(got))
	}
}

// An origin whose health file is unsigned (it holds no key) has it
// refused at every check; the follower says so once, not every
// --follow-refresh.
func TestFollowerLogsARefusedHealthOnce(t *testing.T) {
	key, _ := curatorkey.Generate()
	o := newOrigin(t)
	v := version(t, key, "4.1.0")
	o.set(v, signed(key, v, clock))
	o.health = sourcehealth.Sign(healthOf(t, v, clock), nil, clock, time.Hour).Data
	var logged bytes.Buffer
	h := newHarness(t, o, curatorkey.Public(key), t.TempDir())
	h.f.cfg.Log = slog.New(slog.NewTextHandler(&logged, nil))
	if _, err := h.f.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		h.now = h.now.Add(time.Minute)
		h.f.check(context.Background())
	}
	if hh, _ := h.f.Health(); hh != nil {
		t.Error("an unsigned health file was taken")
	}
	if n := strings.Count(logged.String(), "source health was not taken"); n != 1 {
		t.Errorf("logged %d times:\n%s", n, logged.String())
	}
}
