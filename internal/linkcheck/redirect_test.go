package linkcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/linkcheck/linkchecktest"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// A redirect that leads nowhere a check may go is an error, never ok: a
// loop, a chain past the bound, another scheme, a link-local literal, a
// name that resolves to one. A temporary chain reports the status of the
// page it ends at.
func TestRedirectsThatLeadNowhere(t *testing.T) {
	s := linkchecktest.NewSite(t, 0)
	// metadata.test resolves to the link-local metadata address; the dial
	// refuses it before a packet is sent.
	client := fetch.New(fetch.Options{Resolver: testkit.DNSA(t, net.ParseIP("169.254.169.254")), Operator: true})
	want := []struct {
		path   string
		st     Status
		reason string
		code   int
	}{
		{"/loop", Error, RedirectLoop, 302},
		{"/ping", Error, RedirectLoop, 302},
		{"/to-file", Error, RedirectRefused, 302},
		{"/to-metadata", Error, RedirectRefused, 302},
		{"/to-name", Error, RedirectRefused, 302},
		{"/elsewhere", Error, RedirectRefused, 301},
		{"/far", Error, TooManyRedirects, 302},
		{"/chain", Gone, "redirects to a page that is http 404", 404},
		{"/temp307", OK, "", 200},
	}
	var targets []Target
	for i, w := range want {
		targets = append(targets, Target{Category: "c", Rank: i%3 + 1, URL: s.URL + w.path})
	}
	res := Check(testCtx(t), targets, Options{Client: client, PerHost: 4, Delay: time.Millisecond, Timeout: 5 * time.Second})
	if len(res) != len(want) {
		t.Fatalf("%d results for %d targets", len(res), len(want))
	}
	for i, w := range want {
		r := res[i]
		if r.Status != w.st || r.Reason != w.reason || r.HTTPStatus != w.code || r.Location != "" {
			t.Errorf("%s: %s %q http %d location %q, want %s %q http %d", w.path, r.Status, r.Reason, r.HTTPStatus, r.Location, w.st, w.reason, w.code)
		}
	}
}

// Politeness counts one server once, however its URLs spell its address
// or name it: three spellings of 127.0.0.1 and a name resolving there
// get one request in flight at a time with PerHost 1.
func TestPoliteByAddress(t *testing.T) {
	s := linkchecktest.NewSite(t, 20*time.Millisecond)
	port := s.Listener.Addr().(*net.TCPAddr).Port
	resolver := testkit.DNSA(t, net.ParseIP("127.0.0.1"))
	client := fetch.New(fetch.Options{Resolver: resolver, Operator: true})
	hosts := []string{"127.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "site.test"}
	var targets []Target
	for i := range 24 {
		targets = append(targets, Target{Category: "c", Rank: 1, URL: fmt.Sprintf("http://%s:%d/many/%d", hosts[i%len(hosts)], port, i)})
	}
	res := Check(testCtx(t), targets, Options{Client: client, Resolver: resolver, PerHost: 1, Concurrency: 16, Delay: time.Millisecond, Timeout: 10 * time.Second})
	for _, r := range res {
		// site.test resolves to loopback: the policy refuses it, after
		// the lanes were dealt, so it still counts for the bound.
		if r.Status != OK && !(r.Reason == fetch.RefusedAddress && r.URL[7:16] == "site.test") {
			t.Errorf("%s: %s %s", r.URL, r.Status, r.Reason)
		}
	}
	if m := s.MaxInFlight.Load(); m != 1 {
		t.Errorf("%d requests in flight at once to one server spelled %d ways, with PerHost 1", m, len(hosts))
	}
}

// A check run with no network (every lookup fails, or every name is
// answered not-found; every connection is refused) is told apart from
// one whose sources are gone.
func TestNetworkDown(t *testing.T) {
	noDNS := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no network in this test")
	}}
	for name, r := range map[string]*net.Resolver{"no DNS": noDNS, "NXDOMAIN for every name": nxdomain(t)} {
		t.Run(name, func(t *testing.T) { networkDown(t, r) })
	}
}

func networkDown(t *testing.T, noDNS *net.Resolver) {
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return "http://" + ln.Addr().String() + "/"
	}
	down := []Target{{"c", 1, "http://a.test/"}, {"c", 2, "http://b.test/x"}, {"c", 3, "http://c.test/"}, {"d", 1, closed()}, {"d", 2, "http://nx.test/"}}
	client := fetch.New(fetch.Options{Resolver: noDNS, Operator: true})
	res := Check(testCtx(t), down, Options{Client: client, Resolver: noDNS, Delay: time.Millisecond, Timeout: 5 * time.Second})
	for _, r := range res {
		if !r.NoNetwork {
			t.Errorf("%s: %s %q, not a network failure", r.URL, r.Status, r.Reason)
		}
	}
	if o, isDown := NetworkDown(res); !isDown || o.Hosts != 5 || o.Failed != 5 || o.Answered != 0 {
		t.Errorf("no network: %+v, down %v", o, isDown)
	}

	// One host answering, even with a 404, shows the network works.
	s := linkchecktest.NewSite(t, 0)
	up := append(down[:4:4], Target{"d", 2, s.URL + "/404"})
	res = Check(testCtx(t), up, Options{Client: client, Resolver: noDNS, Delay: time.Millisecond, Timeout: 5 * time.Second})
	if o, isDown := NetworkDown(res); isDown || o.Answered != 1 {
		t.Errorf("one host answered: %+v, down %v", o, isDown)
	}
	// Two hosts are too few to tell.
	if o, isDown := NetworkDown(res[:2]); isDown {
		t.Errorf("two hosts: %+v, down", o)
	}
}
