package curatorlinks

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// site serves pages from a map on loopback; the fetch client reaches it
// for the operator's request, whose URL names 127.0.0.1 itself (fetch's
// literal-IP allowance).
func site(t *testing.T, pages map[string]string) string {
	t.Helper()
	return testkit.Site(t, pages).URL
}

func verifier(maxBytes int64) *Verifier {
	return &Verifier{Client: fetch.New(fetch.Options{}), MaxBytes: maxBytes}
}

func reason(err error) string {
	if err == nil {
		return "verified"
	}
	var f *Failure
	if !errors.As(err, &f) {
		return "not a *Failure: " + err.Error()
	}
	return f.Public
}

func TestVerifyPage(t *testing.T) {
	base := site(t, map[string]string{
		"/with":    "<html><body>3gs: " + key + "</body></html>",
		"/without": "<html><body>nothing here</body></html>",
		"/longer":  "<html><body>" + key + "abc</body></html>",
		"/big":     strings.Repeat("x", 5000) + key,
	})
	v := verifier(4096)
	for path, want := range map[string]string{
		"/with":    "verified",
		"/without": KeyNotFound,
		"/longer":  KeyNotFound,
		"/missing": fetch.Unreachable,
		"/big":     fetch.RefusedTooLarge,
	} {
		if got := reason(v.Verify(context.Background(), key, base+path, true)); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
}

func TestVerifyBareOrigin(t *testing.T) {
	other := "pk:6kozs5ey44jcees417bpf99rchoutjdz8x175zh8jeqw5fr4eaoo"
	for _, c := range []struct {
		name  string
		pages map[string]string
		want  string
	}{
		{"proof file", map[string]string{"/.well-known/3gs.json": `{"pubkey":"` + key + `"}`, "/": "front page"}, "verified"},
		{"front page", map[string]string{"/": "hello " + key}, "verified"},
		{"another key", map[string]string{"/.well-known/3gs.json": `{"pubkey":"` + other + `"}`, "/": "front page"}, KeyNotFound},
		{"not the proof shape", map[string]string{"/.well-known/3gs.json": `{"pubkey":"` + key + `","pubkey":"` + other + `"}`, "/": "front page"}, KeyNotFound},
		{"neither", map[string]string{"/": "front page"}, KeyNotFound},
		// The proof file answered, wrong: that is the reason, not the
		// missing front page.
		{"not the proof shape, no front page", map[string]string{"/.well-known/3gs.json": `{"pubkey":"` + key + `","name":"x"}`}, KeyNotFound},
	} {
		base := site(t, c.pages)
		if got := reason(verifier(0).Verify(context.Background(), key, base, true)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// The address policy applies: a name that resolves to loopback is not
// the literal the operator wrote, and is refused before anything is read.
func TestVerifyKeepsTheAddressPolicy(t *testing.T) {
	base := site(t, map[string]string{"/with": key})
	link := strings.Replace(base, "127.0.0.1", "localhost", 1) + "/with"
	if got := reason(verifier(0).Verify(context.Background(), key, link, true)); got != fetch.RefusedAddress {
		t.Errorf("%s: %s, want %s", link, got, fetch.RefusedAddress)
	}
}

// A peer's link may name a non-public address only where our registry
// endorses that peer: anywhere else it would make us probe our network.
// On a read replica nothing is the operator's, not even our own
// curator's links: they are the followed origin's.
func TestVerifyRefusesAPeersLiteralElsewhere(t *testing.T) {
	base := site(t, map[string]string{"/with": key})
	for _, c := range []struct {
		s    Subject
		want string
	}{
		{Subject{Operator: true}, "verified"},                                          // our own curator's link, on the origin
		{Subject{Operator: true, Home: base + "/"}, "verified"},                        // the peer is endorsed at this address and port
		{Subject{Operator: true, Home: "https://peer.example/"}, fetch.RefusedAddress}, // a peer elsewhere names our loopback
		{Subject{Operator: true, Home: "http://10.0.0.5:8080/"}, fetch.RefusedAddress}, // another non-public address
		{Subject{Operator: true, Home: "http://127.0.0.1:9/"}, fetch.RefusedAddress},   // another port of ours
		{Subject{Operator: true, Home: "https://127.0.0.1/"}, fetch.RefusedAddress},    // another scheme
		{Subject{}, fetch.RefusedAddress},                                              // a replica's curator: the origin's word
		{Subject{Home: base + "/"}, fetch.RefusedAddress},                              // a peer the origin endorses
		{Subject{Operator: true, Home: strings.Replace(base, "http:", "https:", 1) + "/"}, fetch.RefusedAddress},
	} {
		link := base + "/with"
		if got := reason(verifier(0).Verify(context.Background(), key, link, Operator(c.s, link))); got != c.want {
			t.Errorf("%+v: %s, want %s", c.s, got, c.want)
		}
	}
}

// A link no operator chose, whose host is not public in any spelling,
// fails refused before a connection: the page is never asked for.
func TestVerifyNotOperatorsLinkNeverFetched(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(key))
	}))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	for _, host := range []string{"127.0.0.1", "2130706433", "127.1", "[::ffff:127.0.0.1]", "localhost."} {
		link := "http://" + host + ":" + port + "/me"
		if got := reason(verifier(0).Verify(context.Background(), key, link, false)); got != fetch.RefusedAddress {
			t.Errorf("%s: %s, want %s", link, got, fetch.RefusedAddress)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the page was fetched %d times", n)
	}
}

// The command get_identity prints to check a link by hand agrees with
// Verify: it prints a line exactly when the link verifies. Before, a
// proof file with another member, or an error page holding the key,
// passed by hand and failed here.
func TestCheckCommandAgreesWithVerify(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl to run the command with")
	}
	other := "pk:6kozs5ey44jcees417bpf99rchoutjdz8x175zh8jeqw5fr4eaoo"
	errorPage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no page "+r.URL.Path, http.StatusNotFound)
	}))
	t.Cleanup(errorPage.Close)
	cases := map[string]string{
		"proof file":          site(t, map[string]string{"/.well-known/3gs.json": "{\n  \"pubkey\": \"" + key + "\"\n}\n"}),
		"front page":          site(t, map[string]string{"/": "hello " + key}),
		"proof with a member": site(t, map[string]string{"/.well-known/3gs.json": `{"pubkey":"` + key + `","name":"x"}`}),
		"proof of another":    site(t, map[string]string{"/.well-known/3gs.json": `{"pubkey":"` + other + `"}`}),
		"page":                site(t, map[string]string{"/me": "<!-- " + key + " -->"}) + "/me",
		"longer token":        site(t, map[string]string{"/me": key + "x"}) + "/me",
		"error page":          errorPage.URL + "/" + key,
	}
	for name, link := range cases {
		verified := verifier(0).Verify(context.Background(), key, link, true) == nil
		out, _ := exec.Command("sh", "-c", CheckCommand(link, key)).Output()
		if byHand := len(bytes.TrimSpace(out)) > 0; byHand != verified {
			t.Errorf("%s: verified %v, by hand %v (%s)", name, verified, byHand, CheckCommand(link, key))
		}
	}
}
