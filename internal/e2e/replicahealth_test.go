package e2e

import (
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/linkcheck/linkchecktest"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// The origin checks its sources (serve --check-sources) and publishes the
// health file signed with its key; a read replica of it, which checks
// nothing itself, answers get_sources with the same health, reports the
// check in /health and publishes the origin's file and signature. Before,
// the replica showed no health at all: origin and replica answered the
// same question differently.
func TestReplicaServesTheOriginsSourceHealth(t *testing.T) {
	t.Parallel() // its own processes, ports and files
	bin := testkit.Binary(t)
	site := linkchecktest.NewSite(t, 0)
	o := curator.New(t, "origin")
	o.Write(t, oneTopic("Origin", "sourdough-starters", "Sourdough Starters", "sourdough starter feeding",
		[3]string{site.URL + "/ok", site.URL + "/404", site.URL + "/ok?second"}))
	origin := testkit.Serve(t, bin, "--registry", o.Registry, "--key-file", o.KeyFile, "--check-sources", "1s")
	c := &http.Client{Timeout: 10 * time.Second}
	get := func(url string) (int, []byte) {
		resp, err := c.Get(url)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	testkit.WaitFor(t, "the origin to publish its signed health file", 90*time.Second, func() bool {
		code, _ := get(nodeURL(origin.URL) + "/registry.health.json.sig")
		return code == http.StatusOK
	})
	statuses := func(url string) []gen.CheckStatus {
		var out gen.GetSourcesOutput
		callTool(t, url, "get_sources", map[string]any{"slug": "sourdough-starters"}, &out)
		var s []gen.CheckStatus
		for _, src := range out.Sources {
			if src.Health == nil {
				s = append(s, "")
				continue
			}
			s = append(s, src.Health.Status)
		}
		return s
	}
	want := []gen.CheckStatus{"ok", "gone", "ok"}
	if got := statuses(origin.URL); !slices.Equal(got, want) {
		t.Fatalf("the origin's get_sources: %v, want %v", got, want)
	}

	replica := testkit.Serve(t, bin, "--follow", nodeURL(origin.URL), "--follow-pubkey", o.Pub, "--follow-cache", filepath.Join(t.TempDir(), "cache"), "--follow-refresh", "1s")
	if got := statuses(replica.URL); !slices.Equal(got, want) {
		t.Errorf("the replica's get_sources: %v, want the origin's %v\nreplica log:\n%s", got, want, notable(replica.Stderr()))
	}
	code, body := get(nodeURL(replica.URL) + "/health")
	if h, err := gen.DecodeHealth(body); code != http.StatusOK || err != nil || h.Sources == nil || h.Sources.Ok != 2 || h.Sources.Gone != 1 {
		t.Errorf("the replica's /health sources: %d %s", code, body)
	}
	// The replica publishes the origin's file and signature as they came:
	// a pair that verifies against the origin's key, for the servers of
	// curators who endorse the origin but read the replica. The origin
	// checks every second and the replica follows, so a pair read across
	// a change is read again.
	key, err := curatorkey.ParsePublicKey(o.Pub)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the replica's health file and signature to verify against the origin's key", 30*time.Second, func() bool {
		c1, data := get(nodeURL(replica.URL) + "/registry.health.json")
		c2, sig := get(nodeURL(replica.URL) + "/registry.health.json.sig")
		if c1 != http.StatusOK || c2 != http.StatusOK {
			return false
		}
		_, err := signature.VerifyHealth(data, sig, key)
		return err == nil
	})
}
