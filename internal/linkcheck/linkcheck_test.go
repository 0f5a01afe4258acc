package linkcheck

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/linkcheck/linkchecktest"
	"github.com/three-good-sources/3gs/internal/testkit"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestClassifies(t *testing.T) {
	s := linkchecktest.NewSite(t, 0)
	paths := []string{"/ok", "/404", "/410", "/old", "/old308", "/temp", "/temp307", "/500", "/stall", "/nohead", "/busy", "/moved-to-gone", "/elsewhere"}
	var targets []Target
	for i, p := range paths {
		targets = append(targets, Target{Category: "c", Rank: i%3 + 1, URL: s.URL + p})
	}
	var logged []string
	var logMu sync.Mutex
	res := Check(testCtx(t), targets, Options{
		Client:  operatorClient(2 * time.Second),
		PerHost: 4, Delay: time.Millisecond, Timeout: 2 * time.Second,
		Log: func(m string) { logMu.Lock(); logged = append(logged, m); logMu.Unlock() },
	})
	if len(res) != len(paths) {
		t.Fatalf("%d results for %d targets", len(res), len(paths))
	}
	want := map[string]struct {
		st     Status
		reason string
		loc    string
	}{
		"/ok":            {OK, "", ""},
		"/404":           {Gone, "http 404", ""},
		"/410":           {Gone, "http 410", ""},
		"/old":           {Redirected, "http 301", s.URL + "/new"},
		"/old308":        {Redirected, "http 308", s.URL + "/new"},
		"/temp":          {OK, "", ""},
		"/temp307":       {OK, "", ""},
		"/500":           {Error, "http 500", ""},
		"/stall":         {Error, "timeout", ""},
		"/nohead":        {OK, "", ""},
		"/busy":          {OK, "", ""},
		"/moved-to-gone": {Gone, "redirects to a page that is http 404", ""},
		// Not followed (a non-public literal the other side named), and
		// not a move to apply: no page was reached.
		"/elsewhere": {Error, RedirectRefused, ""},
	}
	for i, r := range res {
		p := paths[i]
		w := want[p]
		if r.URL != targets[i].URL || r.Status != w.st || r.Reason != w.reason || r.Location != w.loc {
			t.Errorf("%s: %s %q %q, want %s %q %q", p, r.Status, r.Reason, r.Location, w.st, w.reason, w.loc)
		}
		if r.CheckedAt.IsZero() {
			t.Errorf("%s: no CheckedAt", p)
		}
	}
	if !res[3].LocationAnswered || res[12].LocationAnswered {
		t.Errorf("LocationAnswered: /old %v, /elsewhere %v", res[3].LocationAnswered, res[12].LocationAnswered)
	}
	if res[0].Title != "A good & true page" || res[0].Size <= 0 {
		t.Errorf("/ok: title %q size %d", res[0].Title, res[0].Size)
	}
	if m := s.Methods("/nohead"); len(m) != 2 || m[0] != "HEAD" || m[1] != "GET" {
		t.Errorf("/nohead asked with %v, want HEAD then GET", m)
	}
	if m := s.Methods("/410"); len(m) != 1 || m[0] != "HEAD" {
		t.Errorf("/410 asked with %v, want HEAD alone", m)
	}
	if m := s.Methods("/busy"); len(m) < 2 {
		t.Errorf("/busy asked %v: the Retry-After was not honoured with a retry", m)
	}
}

// No more than PerHost requests are ever in flight to one host, however
// many workers there are.
func TestPerHostBound(t *testing.T) {
	for _, perHost := range []int{1, 3} {
		s := linkchecktest.NewSite(t, 5*time.Millisecond)
		var targets []Target
		for i := range 30 {
			targets = append(targets, Target{Category: "c", Rank: 1, URL: fmt.Sprintf("%s/many/%d", s.URL, i)})
		}
		res := Check(testCtx(t), targets, Options{Client: operatorClient(10 * time.Second), PerHost: perHost, Concurrency: 16, Delay: time.Millisecond, Timeout: 10 * time.Second})
		for _, r := range res {
			if r.Status != OK {
				t.Fatalf("%s: %s %s", r.URL, r.Status, r.Reason)
			}
		}
		if m := s.MaxInFlight.Load(); m > int64(perHost) || m < 1 {
			t.Errorf("per host %d: %d requests were in flight at once", perHost, m)
		}
	}
}

// A page whose title changed since the last check, or whose size moved
// far, is changed.
func TestChanged(t *testing.T) {
	s := linkchecktest.NewSite(t, 0)
	targets := []Target{{"c", 1, s.URL + "/parked"}, {"c", 2, s.URL + "/ok"}, {"c", 3, s.URL + "/new"}}
	prev := map[string]Previous{
		s.URL + "/parked": {Title: "Rust documentation", Size: -1},
		s.URL + "/ok":     {Title: "A good & true page", Size: -1},
		s.URL + "/new":    {Size: 90000},
	}
	res := Check(testCtx(t), targets, Options{Client: operatorClient(DefaultTimeout), Delay: time.Millisecond, Previous: prev})
	for i, want := range []Status{Changed, OK, Changed} {
		if res[i].Status != want {
			t.Errorf("%s: %s (%s), want %s", res[i].URL, res[i].Status, res[i].Reason, want)
		}
	}
}

// A name that no longer resolves is gone; a connection refused is an error.
func TestDNSGoneAndRefused(t *testing.T) {
	client := fetch.New(fetch.Options{Resolver: nxdomain(t), Operator: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close()
	res := Check(testCtx(t), []Target{{"c", 1, "http://no-such-host.invalid/page"}, {"c", 2, closed}, {"c", 3, "ftp://x.example/"}},
		Options{Client: client, Delay: time.Millisecond, Timeout: 5 * time.Second})
	if res[0].Status != Gone || res[0].Reason != "name does not resolve" {
		t.Errorf("unresolvable name: %s %q", res[0].Status, res[0].Reason)
	}
	if res[1].Status != Error || res[1].Reason != fetch.Unreachable {
		t.Errorf("closed port: %s %q", res[1].Status, res[1].Reason)
	}
	if res[2].Status != Error {
		t.Errorf("ftp URL: %s %q", res[2].Status, res[2].Reason)
	}
}

// nxdomain is a resolver whose server answers every question with
// NXDOMAIN.
func nxdomain(t *testing.T) *net.Resolver {
	return testkit.DNS(t, func(q []byte) []byte {
		if len(q) < 12 {
			return nil
		}
		out := q
		out[2], out[3] = 0x81, 0x83 // response, recursion available, NXDOMAIN
		binary.BigEndian.PutUint16(out[6:], 0)
		binary.BigEndian.PutUint16(out[8:], 0)
		binary.BigEndian.PutUint16(out[10:], 0)
		return out
	})
}

func TestRetryAfterAndTitle(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{"": 0, "5": 5 * time.Second, "-3": 0, "soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second, "99999999": 86400 * time.Second} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", v, got, want)
		}
	}
	for page, want := range map[string]string{
		"<TITLE lang=en>\n  Hello\n world </TITLE>": "Hello world",
		"<title>no end": "",
		"no title":      "",
		"<title>" + strings.Repeat("é", 300) + "</title>": strings.Repeat("é", 200),
	} {
		if got := title([]byte(page)); got != want {
			t.Errorf("title(%.30q) = %q, want %q", page, got, want)
		}
	}
}

// operatorClient is the client 3gs check uses on the operator's own
// registry: the test sites are on loopback, named by their literal
// address, which only the operator's sources may be.
func operatorClient(timeout time.Duration) *fetch.Client {
	return fetch.New(fetch.Options{ConnectTimeout: min(timeout, fetch.DefaultConnectTimeout), HeaderTimeout: timeout, Operator: true})
}
