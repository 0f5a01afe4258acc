package linkcheck

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/fetch"
)

// site is a loopback server with a page for each class, counting the
// requests in flight.
type site struct {
	*httptest.Server
	inFlight, maxInFlight atomic.Int64
	busyOnce              sync.Once
	mu                    sync.Mutex
	methods               map[string][]string // path → methods asked
	stallRelease          chan struct{}
}

func newSite(t *testing.T, hold time.Duration) *site {
	s := &site{methods: map[string][]string{}, stallRelease: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		for {
			m := s.maxInFlight.Load()
			if n <= m || s.maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		s.mu.Lock()
		s.methods[r.URL.Path] = append(s.methods[r.URL.Path], r.Method)
		s.mu.Unlock()
		if hold > 0 {
			time.Sleep(hold)
		}
		page := func(title string, size int) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			body := "<html><head><title>" + title + "</title></head><body>" + strings.Repeat("x", size) + "</body></html>"
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			if r.Method != http.MethodHead {
				w.Write([]byte(body))
			}
		}
		switch p := r.URL.Path; {
		case p == "/ok" || p == "/new" || strings.HasPrefix(p, "/many/"):
			page("A good &amp; true page", 100)
		case p == "/parked":
			page("This domain is for sale", 100)
		case p == "/404":
			http.NotFound(w, r)
		case p == "/410":
			w.WriteHeader(http.StatusGone)
		case p == "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case p == "/old308":
			http.Redirect(w, r, "/new", http.StatusPermanentRedirect)
		case p == "/temp":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case p == "/temp307":
			http.Redirect(w, r, "/ok", http.StatusTemporaryRedirect)
		case p == "/moved-to-gone":
			http.Redirect(w, r, "/404", http.StatusMovedPermanently)
		case p == "/elsewhere":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusMovedPermanently)
		case p == "/500":
			w.WriteHeader(http.StatusInternalServerError)
		case p == "/stall":
			select {
			case <-r.Context().Done():
			case <-s.stallRelease:
			case <-time.After(20 * time.Second):
			}
		case p == "/nohead":
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			page("No HEAD here", 10)
		case p == "/busy":
			first := false
			s.busyOnce.Do(func() { first = true })
			if first {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			page("Busy, then fine", 10)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() { close(s.stallRelease); s.Close() })
	return s
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestClassifies(t *testing.T) {
	s := newSite(t, 0)
	paths := []string{"/ok", "/404", "/410", "/old", "/old308", "/temp", "/temp307", "/500", "/stall", "/nohead", "/busy", "/moved-to-gone", "/elsewhere"}
	var targets []Target
	for i, p := range paths {
		targets = append(targets, Target{Category: "c", Rank: i%3 + 1, URL: s.URL + p})
	}
	var logged []string
	var logMu sync.Mutex
	res := Check(testCtx(t), targets, Options{
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
		// Not followed (a non-public literal the other side named), but
		// the move itself is reported.
		"/elsewhere": {Redirected, "http 301", "http://169.254.169.254/latest/meta-data"},
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
	if res[0].Title != "A good & true page" || res[0].Size <= 0 {
		t.Errorf("/ok: title %q size %d", res[0].Title, res[0].Size)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.methods["/nohead"]; len(m) != 2 || m[0] != "HEAD" || m[1] != "GET" {
		t.Errorf("/nohead asked with %v, want HEAD then GET", m)
	}
	if m := s.methods["/410"]; len(m) != 1 || m[0] != "HEAD" {
		t.Errorf("/410 asked with %v, want HEAD alone", m)
	}
	if m := s.methods["/busy"]; len(m) < 2 {
		t.Errorf("/busy asked %v: the Retry-After was not honoured with a retry", m)
	}
}

// No more than PerHost requests are ever in flight to one host, however
// many workers there are.
func TestPerHostBound(t *testing.T) {
	for _, perHost := range []int{1, 3} {
		s := newSite(t, 5*time.Millisecond)
		var targets []Target
		for i := range 30 {
			targets = append(targets, Target{Category: "c", Rank: 1, URL: fmt.Sprintf("%s/many/%d", s.URL, i)})
		}
		res := Check(testCtx(t), targets, Options{PerHost: perHost, Concurrency: 16, Delay: time.Millisecond, Timeout: 10 * time.Second})
		for _, r := range res {
			if r.Status != OK {
				t.Fatalf("%s: %s %s", r.URL, r.Status, r.Reason)
			}
		}
		if m := s.maxInFlight.Load(); m > int64(perHost) || m < 1 {
			t.Errorf("per host %d: %d requests were in flight at once", perHost, m)
		}
	}
}

// A page whose title changed since the last check, or whose size moved
// far, is changed.
func TestChanged(t *testing.T) {
	s := newSite(t, 0)
	targets := []Target{{"c", 1, s.URL + "/parked"}, {"c", 2, s.URL + "/ok"}, {"c", 3, s.URL + "/new"}}
	prev := map[string]Previous{
		s.URL + "/parked": {Title: "Rust documentation", Size: -1},
		s.URL + "/ok":     {Title: "A good & true page", Size: -1},
		s.URL + "/new":    {Size: 90000},
	}
	res := Check(testCtx(t), targets, Options{Delay: time.Millisecond, Previous: prev})
	for i, want := range []Status{Changed, OK, Changed} {
		if res[i].Status != want {
			t.Errorf("%s: %s (%s), want %s", res[i].URL, res[i].Status, res[i].Reason, want)
		}
	}
}

// A name that no longer resolves is gone; a connection refused is an error.
func TestDNSGoneAndRefused(t *testing.T) {
	client := fetch.New(fetch.Options{Resolver: nxdomain(t)})
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
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n < 12 {
				continue
			}
			out := append([]byte(nil), buf[:n]...)
			out[2], out[3] = 0x81, 0x83 // response, recursion available, NXDOMAIN
			binary.BigEndian.PutUint16(out[6:], 0)
			binary.BigEndian.PutUint16(out[8:], 0)
			binary.BigEndian.PutUint16(out[10:], 0)
			pc.WriteTo(out, from)
		}
	}()
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
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
