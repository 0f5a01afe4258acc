package tools

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorlinks"
	"github.com/three-good-sources/3gs/internal/fetch"
)

// On a read replica the curator's links are the followed origin's words,
// not the operator's: one naming a loopback page of the replica's machine
// is never fetched, get_identity reports it refused, and it gets no
// command to fetch it by hand. On the origin the same links are the
// operator's own and are checked.
func TestReplicaDoesNotFetchTheOriginsLoopbackLinks(t *testing.T) {
	for _, c := range []struct {
		origin string
		hits   int32
		status gen.IdentityLinkStatus
	}{
		{"http://127.0.0.1:1", 0, gen.IdentityLinkStatusFailed},
		{"", 1, gen.IdentityLinkStatusVerified},
	} {
		var hits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.Write([]byte(ownKey))
		}))
		t.Cleanup(srv.Close)
		doc := `{"version":"1.0.0","updated":"2026-11-21","curator":{"name":"Ada","pubkey":"` + ownKey + `","links":["` + srv.URL + `/secret"]},"endorsements":[],` +
			`"categories":{"go":{"name":"Go","description":"D","query_patterns":["learn go","go tutorial","go modules"],"sources":[` +
			`{"rank":1,"name":"A","url":"https://a.example/","type":"tool","why":"W"},{"rank":2,"name":"B","url":"https://b.example/","type":"book","why":"W"},` +
			`{"rank":3,"name":"C","url":"https://c.example/","type":"repo","why":"W"}]}}}`
		h, _ := serving(t, []byte(doc), nil, Config{Origin: c.origin})
		checker := curatorlinks.New(curatorlinks.Config{Verifier: &curatorlinks.Verifier{Client: fetch.New(fetch.Options{})}, Refresh: 24 * time.Hour, Subjects: h.IdentitySubjects})
		checker.Round(context.Background())
		h.SetIdentities(checker)
		out, err := h.GetIdentity(context.Background(), &gen.GetIdentityInput{})
		if err != nil {
			t.Fatal(err)
		}
		if hits.Load() != c.hits || len(out.Links) != 1 || out.Links[0].Status != c.status {
			t.Fatalf("origin %q: %d requests, links %+v; want %d, %s", c.origin, hits.Load(), out.Links, c.hits, c.status)
		}
		text := h.GetIdentityText(out)
		if c.origin == "" {
			if !strings.Contains(out.Links[0].Check, "curl") {
				t.Errorf("the origin's own link has no check: %q", out.Links[0].Check)
			}
			continue
		}
		if r := deref(out.Links[0].Reason); r != fetch.RefusedAddress {
			t.Errorf("reason %q, want %q", r, fetch.RefusedAddress)
		}
		if out.Links[0].Check != "" || strings.Contains(text, "curl") {
			t.Errorf("a refused link comes with a command to fetch it: %q\n%s", out.Links[0].Check, text)
		}
	}
}
