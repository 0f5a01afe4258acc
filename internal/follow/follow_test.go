package follow

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/signature"
)

// clock is the time the tests run at; signatures are made around it.
var clock = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// origin serves a registry and its signature the way a static host does,
// and can be changed or taken down between checks.
type origin struct {
	mu        sync.Mutex
	data, sig []byte
	// health and healthSig are the source health file it publishes and
	// its signature; nil: none (404).
	health, healthSig []byte
	down              bool
	srv               *httptest.Server
}

func newOrigin(t *testing.T) *origin {
	o := &origin{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		defer o.mu.Unlock()
		switch {
		case o.down:
			http.Error(w, "down", http.StatusServiceUnavailable)
		case r.URL.Path == "/registry":
			w.Write(o.data)
		case r.URL.Path == "/registry.sig":
			w.Write(o.sig)
		case r.URL.Path == "/registry.health.json" && o.health != nil:
			w.Write(o.health)
		case r.URL.Path == "/registry.health.json.sig" && o.healthSig != nil:
			w.Write(o.healthSig)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *origin) set(data, sig []byte) {
	o.mu.Lock()
	o.data, o.sig, o.down = data, sig, false
	o.mu.Unlock()
}

func (o *origin) setDown() {
	o.mu.Lock()
	o.down = true
	o.mu.Unlock()
}

// version is the frozen registry Basic with key as curator, at version v.
func version(t *testing.T, key ed25519.PrivateKey, v string) []byte {
	t.Helper()
	var cur struct {
		Version string
		Curator struct{ Pubkey string }
	}
	json.Unmarshal(frozen.Registry(frozen.Basic), &cur)
	data := bytes.Replace(frozen.Registry(frozen.Basic), []byte(cur.Curator.Pubkey), []byte(curatorkey.URI(curatorkey.Public(key))), 1)
	return bytes.Replace(data, []byte(`"version": "`+cur.Version+`"`), []byte(`"version": "`+v+`"`), 1)
}

func signed(key ed25519.PrivateKey, data []byte, at time.Time) []byte {
	return signature.SignWith(data, key, at, signature.Options{Expires: at.Add(30 * 24 * time.Hour)})
}

type harness struct {
	f         *Follower
	published []*peer.Copy
	now       time.Time
}

func newHarness(t *testing.T, o *origin, key ed25519.PublicKey, cache string) *harness {
	h := &harness{now: clock}
	h.f = New(Config{URL: o.srv.URL, Key: key, Refresh: time.Second, CacheDir: cache,
		Fetcher: peer.NewFetcher(8<<20, 5*time.Second).AsOperator(true), Now: func() time.Time { return h.now },
		Publish: func(c *peer.Copy) { h.published = append(h.published, c) }})
	return h
}

func TestFollowsNewVersionsAndRefusesBadOnes(t *testing.T) {
	key, _ := curatorkey.Generate()
	other, _ := curatorkey.Generate()
	o := newOrigin(t)
	v1, v2 := version(t, key, "2.0.0"), version(t, key, "2.0.1")
	sig1, sig2 := signed(key, v1, clock.Add(-time.Hour)), signed(key, v2, clock)
	o.set(v1, sig1)
	h := newHarness(t, o, curatorkey.Public(key), t.TempDir())
	first, err := h.f.Start(context.Background())
	if err != nil || first.Registry.Version() != "2.0.0" {
		t.Fatalf("start: %v", err)
	}
	// A new version at the origin is published.
	o.set(v2, sig2)
	h.now = clock.Add(time.Minute)
	h.f.check(context.Background())
	if len(h.published) != 1 || h.published[0].Registry.Version() != "2.0.1" || h.f.State().Status != Fresh {
		t.Fatalf("after the origin's change: %d published, %+v", len(h.published), h.f.State())
	}
	// Each bad answer is refused, the good copy stays served.
	for _, c := range []struct {
		name       string
		data, sig  []byte
		down       bool
		status     Status
		reasonHint string
	}{
		{"rolled back", v1, sig1, false, Refused, "older"},
		{"tampered", bytes.Replace(v2, []byte("Rust"), []byte("Rusk"), 1), sig2, false, Refused, "signature"},
		{"another key", v2, signed(other, v2, clock), false, Refused, "signature"},
		{"expired", version(t, key, "2.0.2"), signed(key, version(t, key, "2.0.2"), clock.Add(-40*24*time.Hour)), false, Refused, "expired"},
		{"down", nil, nil, true, Unreachable, "503"},
	} {
		if c.down {
			o.setDown()
		} else {
			o.set(c.data, c.sig)
		}
		h.now = h.now.Add(time.Minute)
		h.f.check(context.Background())
		st := h.f.State()
		if st.Status != c.status || !strings.Contains(st.Reason, c.reasonHint) || st.Served.Registry.Version() != "2.0.1" || len(h.published) != 1 {
			t.Errorf("%s: status %s, reason %q, serving %s, %d published", c.name, st.Status, st.Reason, st.Served.Registry.Version(), len(h.published))
		}
	}
}

// A restart while the origin is down serves the last good copy from the
// cache; with neither, start fails saying why.
func TestRestartServesTheCache(t *testing.T) {
	key, _ := curatorkey.Generate()
	o := newOrigin(t)
	v := version(t, key, "3.1.0")
	o.set(v, signed(key, v, clock))
	cache := t.TempDir()
	if _, err := newHarness(t, o, curatorkey.Public(key), cache).f.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	o.setDown()
	c, err := newHarness(t, o, curatorkey.Public(key), cache).f.Start(context.Background())
	if err != nil || c.Registry.Version() != "3.1.0" {
		t.Fatalf("restart with the origin down: %v", err)
	}
	// The cached copy is also the floor: an older one from the origin is
	// refused after the restart.
	old := version(t, key, "3.0.0")
	o.set(old, signed(key, old, clock))
	h := newHarness(t, o, curatorkey.Public(key), cache)
	if _, err := h.f.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := h.f.State(); st.Status != Refused || st.Served.Registry.Version() != "3.1.0" {
		t.Errorf("an older origin after a restart: %+v", st)
	}
	o.setDown()
	if _, err := newHarness(t, o, curatorkey.Public(key), t.TempDir()).f.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "no verified copy") {
		t.Errorf("no origin, no cache: %v", err)
	}
}

// With the origin down and no cached copy, the log does not claim a last
// good copy is served: there is none.
func TestNoCopyIsNotCalledTheLastGoodOne(t *testing.T) {
	key, _ := curatorkey.Generate()
	o := newOrigin(t)
	o.setDown()
	var logged bytes.Buffer
	f := New(Config{URL: o.srv.URL, Key: curatorkey.Public(key), Refresh: time.Second, CacheDir: t.TempDir(),
		Fetcher: peer.NewFetcher(8<<20, 5*time.Second).AsOperator(true), Now: func() time.Time { return clock },
		Log: slog.New(slog.NewTextHandler(&logged, nil))})
	if _, err := f.Start(context.Background()); err == nil {
		t.Fatal("started with nothing to serve")
	}
	if strings.Contains(logged.String(), "last good copy") || !strings.Contains(logged.String(), "no copy to serve yet") {
		t.Errorf("log:\n%s", logged.String())
	}
}
