package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestPublic(t *testing.T) {
	for _, c := range []struct {
		addr   string
		public bool
	}{
		{"8.8.8.8", true}, {"1.1.1.1", true}, {"2606:4700:4700::1111", true}, {"93.184.216.34", true},
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", true},  // 6to4 of 8.8.8.8
		{"127.0.0.1", false}, {"127.8.9.10", false}, {"::1", false},
		{"10.1.2.3", false}, {"172.16.0.1", false}, {"172.31.255.255", false}, {"192.168.1.1", false},
		{"fc00::1", false}, {"fd12:3456::1", false},
		{"169.254.169.254", false}, {"fe80::1", false}, {"fe80::1%eth0", false},
		{"224.0.0.1", false}, {"239.255.255.250", false}, {"ff02::1", false},
		{"0.0.0.0", false}, {"::", false}, {"0.1.2.3", false},
		{"100.64.0.1", false}, {"100.127.255.254", false},
		{"192.0.2.1", false}, {"198.18.0.1", false}, {"240.0.0.1", false}, {"255.255.255.255", false},
		{"::ffff:127.0.0.1", false}, {"::ffff:10.0.0.1", false}, {"::ffff:8.8.8.8", true},
		{"64:ff9b::7f00:1", false}, // NAT64 of 127.0.0.1
		{"2002:7f00:1::1", false},  // 6to4 of 127.0.0.1
		{"2001:db8::1", false}, {"::127.0.0.1", false},
		// The IANA IPv6 special-purpose ranges that are not globally
		// reachable, and space outside global unicast.
		{"2001:2::1", false}, {"2001:10::1", false}, {"2001:20::1", false}, {"3fff::1", false},
		{"5f00::1", false}, {"100:0:0:1::1", false}, {"4000::1", false}, {"::ffff:7f00:1", false},
		{"192.0.0.170", false}, {"192.31.196.1", true}, {"2620:4f:8000::1", true},
	} {
		a := netip.MustParseAddr(c.addr)
		if got := Public(a); got != c.public {
			t.Errorf("Public(%s) = %v, want %v", c.addr, got, c.public)
		}
	}
}

// The address check runs on the address connected to: for the
// operator's request, a literal the URL names passes whatever it is; any
// other non-public one is refused, and for anyone else's request the
// literal is refused too.
func TestControl(t *testing.T) {
	for _, c := range []struct {
		host, addr string
		operator   bool
		ok         bool
	}{
		{"127.0.0.1", "127.0.0.1:80", true, true},
		{"::1", "[::1]:80", true, true},
		{"10.0.0.5", "10.0.0.5:443", true, true},
		{"127.0.0.1", "127.0.0.2:80", true, false},
		{"localhost", "127.0.0.1:80", true, false},
		{"localhost", "[::1]:80", true, false},
		{"peer.example", "169.254.169.254:80", true, false},
		{"peer.example", "10.0.0.5:80", true, false},
		{"peer.example", "8.8.8.8:443", true, true},
		// Not the operator's: a literal earns nothing.
		{"127.0.0.1", "127.0.0.1:80", false, false},
		{"::1", "[::1]:80", false, false},
		{"10.0.0.5", "10.0.0.5:443", false, false},
		{"::ffff:127.0.0.1", "127.0.0.1:80", false, false},
		{"8.8.8.8", "8.8.8.8:443", false, true},
		{"peer.example.net", "8.8.8.8:443", false, true},
		{"peer.example.net", "100.64.0.1:443", false, false},
	} {
		err := control(c.host, c.operator)("tcp", c.addr, nil)
		var fe *Error
		switch {
		case c.ok && err != nil:
			t.Errorf("%s → %s (operator %v): refused: %v", c.host, c.addr, c.operator, err)
		case !c.ok && (!errors.As(err, &fe) || fe.Public != RefusedAddress || !fe.Refused):
			t.Errorf("%s → %s (operator %v): want %q, got %v", c.host, c.addr, c.operator, RefusedAddress, err)
		}
	}
}

// newTestClient fetches as the operator: the tests' servers are on
// loopback, named by their literal address.
func newTestClient(budget int64) *Client {
	return New(Options{ConnectTimeout: 2 * time.Second, HeaderTimeout: 5 * time.Second, Budget: budget, Operator: true})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func wantPublic(t *testing.T, err error, want string) *Error {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) || fe.Public != want {
		t.Fatalf("want %q, got %v", want, err)
	}
	return fe
}

// A server on loopback named by its literal address answers; the same
// server named through localhost is refused before anything is sent.
func TestLiteralAllowedNameRefused(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Accept-Encoding") != "identity" {
			t.Errorf("Accept-Encoding %q, want identity", r.Header.Get("Accept-Encoding"))
		}
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	c := newTestClient(1 << 20)
	resp, err := c.Get(ctx(t), Request{URL: srv.URL + "/x", What: "doc", Limit: 100})
	if err != nil || resp.Status != 200 || string(resp.Body) != "hello" {
		t.Fatalf("literal loopback: %v %+v", err, resp)
	}
	resp.Release()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	_, err = c.Get(ctx(t), Request{URL: "http://localhost:" + port + "/x", What: "doc", Limit: 100})
	fe := wantPublic(t, err, RefusedAddress)
	if !strings.Contains(fe.Detail, "localhost") || !strings.Contains(fe.Detail, "not a public address") {
		t.Errorf("detail does not say why: %s", fe.Detail)
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests reached the server, want 1 (the one by literal address)", hits.Load())
	}
}

// A redirect to another port on the same host is not followed: the other
// service is never asked, and nothing it would say comes back.
func TestRedirectOnlySameOrigin(t *testing.T) {
	var secretHits atomic.Int32
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secretHits.Add(1)
		io.WriteString(w, "TOPSECRET-VALUE-42")
	}))
	defer secret.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, secret.URL+"/internal", http.StatusFound)
		case "/https":
			http.Redirect(w, r, "https://"+r.Host+"/moved", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/moved", http.StatusMovedPermanently)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/moved":
			io.WriteString(w, "moved here")
		}
	}))
	defer srv.Close()
	c := newTestClient(1 << 20)
	for _, path := range []string{"/away", "/https", "/loop"} {
		_, err := c.Get(ctx(t), Request{URL: srv.URL + path, What: "doc", Limit: 100})
		fe := wantPublic(t, err, RefusedRedirect)
		if strings.Contains(fe.Detail, "TOPSECRET") || !strings.Contains(fe.Detail, "redirect") {
			t.Errorf("%s: %s", path, fe.Detail)
		}
	}
	if secretHits.Load() != 0 {
		t.Errorf("the service redirected to was asked %d times", secretHits.Load())
	}
	resp, err := c.Get(ctx(t), Request{URL: srv.URL + "/here", What: "doc", Limit: 100})
	if err != nil || string(resp.Body) != "moved here" {
		t.Errorf("a redirect on the same origin: %v %+v", err, resp)
	}
}

// A compressed body is refused unread, however small it is on the wire.
func TestEncodingRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", r.URL.Query().Get("e"))
		w.Write(bytes.Repeat([]byte{0}, 1000))
	}))
	defer srv.Close()
	c := newTestClient(1 << 20)
	for _, e := range []string{"gzip", "br", "identity, gzip", "deflate"} {
		_, err := c.Get(ctx(t), Request{URL: srv.URL + "/?e=" + url.QueryEscape(e), What: "doc", Limit: 1 << 20})
		wantPublic(t, err, RefusedEncoding)
		s, err := c.Open(ctx(t), Request{URL: srv.URL + "/?e=" + url.QueryEscape(e), What: "log", Limit: 1 << 20})
		if err == nil {
			s.Body.Close()
		}
		wantPublic(t, err, RefusedEncoding)
	}
	resp, err := c.Get(ctx(t), Request{URL: srv.URL + "/?e=identity", What: "doc", Limit: 1 << 20})
	if err != nil || len(resp.Body) != 1000 {
		t.Errorf("identity: %v", err)
	}
}

// Bodies over the limit are refused, with or without a Content-Length;
// one exactly at it is read.
func TestLimits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.URL.Query().Get("n"), &n)
		body := bytes.Repeat([]byte("x"), n)
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", fmt.Sprint(n))
			w.Write(body)
			return
		}
		for len(body) > 0 { // flushed in pieces: no Content-Length
			k := min(len(body), 1000)
			w.Write(body[:k])
			w.(http.Flusher).Flush()
			body = body[k:]
		}
	}))
	defer srv.Close()
	c := newTestClient(1 << 20)
	const limit = 200_000
	for _, chunked := range []string{"", "1"} {
		for _, n := range []int{0, 1, limit - 1, limit} {
			resp, err := c.Get(ctx(t), Request{URL: fmt.Sprintf("%s/?n=%d&chunked=%s", srv.URL, n, chunked), What: "doc", Limit: limit})
			if err != nil || len(resp.Body) != n || cap(resp.Body) > n+n/4+8 {
				t.Errorf("n=%d chunked=%q: %v, len %d cap %d", n, chunked, err, len(resp.Body), cap(resp.Body))
				continue
			}
			resp.Release()
		}
		for _, n := range []int{limit + 1, 3 * limit} {
			_, err := c.Get(ctx(t), Request{URL: fmt.Sprintf("%s/?n=%d&chunked=%s", srv.URL, n, chunked), What: "doc", Limit: limit})
			wantPublic(t, err, RefusedTooLarge)
		}
	}
	if n := c.budget.inUse(); n != 0 {
		t.Errorf("%d bytes still held in the budget", n)
	}
	// A stream stops at its limit too.
	s, err := c.Open(ctx(t), Request{URL: fmt.Sprintf("%s/?n=%d&chunked=1", srv.URL, 5000), What: "log", Limit: 4000})
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(s.Body)
	s.Body.Close()
	wantPublic(t, err, RefusedTooLarge)
}

// readBody never grows its buffer past limit+1, whatever arrives.
func TestReadBodyNeverPastLimit(t *testing.T) {
	const limit = 300_000
	_, err := readBody(io.LimitReader(zeros{}, 10*limit), -1, limit)
	if !errors.Is(err, errTooLarge) {
		t.Fatalf("want too large, got %v", err)
	}
	b, err := readBody(io.LimitReader(zeros{}, limit), -1, limit)
	if err != nil || len(b) != limit || cap(b) > limit+1 {
		t.Fatalf("at the limit: %v len %d cap %d", err, len(b), cap(b))
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// Connection failures and HTTP error statuses look alike from outside.
func TestClosedPortUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = newTestClient(1<<20).Get(ctx(t), Request{URL: "http://" + addr + "/", What: "doc", Limit: 100})
	fe := wantPublic(t, err, Unreachable)
	if fe.Refused {
		t.Errorf("a closed port counts as refused: %v", fe)
	}
	if PublicReason(errors.New("anything")) != Unreachable {
		t.Error("an unknown error is not unreachable")
	}
}

// The budget holds its total across fetches in flight, serves waiters
// in order, and gives up a wait when the context ends.
func TestBudget(t *testing.T) {
	b := newBudget(100)
	bg := context.Background()
	if err := b.acquire(bg, 60); err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 2)
	go func() { b.acquire(bg, 50); got <- 50 }()
	for b.waiting() == 0 {
		time.Sleep(time.Millisecond)
	}
	go func() { b.acquire(bg, 10); got <- 10 }() // would fit, but waits its turn
	for b.waiting() < 2 {
		time.Sleep(time.Millisecond)
	}
	select {
	case n := <-got:
		t.Fatalf("%d granted past the total", n)
	case <-time.After(50 * time.Millisecond):
	}
	b.release(60)
	<-got
	<-got
	if b.inUse() != 60 {
		t.Errorf("in use %d", b.inUse())
	}
	cctx, cancel := context.WithCancel(bg)
	done := make(chan error)
	go func() { done <- b.acquire(cctx, 50) }()
	for b.waiting() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("a cancelled wait was granted")
	}
	b.release(60)
	if b.inUse() != 0 || b.waiting() != 0 {
		t.Errorf("in use %d, waiting %d", b.inUse(), b.waiting())
	}
	if b.clamp(1000) != 100 {
		t.Error("a body larger than the budget could never be read")
	}
}

// In a test run, an address the policy allows is still refused unless it
// is loopback: no test reaches another machine, whatever its resolver says.
func TestTestRunStaysOnLoopback(t *testing.T) {
	if !loopbackOnly {
		t.Fatal("a test binary is not held to loopback")
	}
	allow := func(string, string, syscall.RawConn) error { return nil }
	for addr, ok := range map[string]bool{"127.0.0.1:80": true, "127.9.9.9:80": true, "[::1]:80": true, "[::ffff:127.0.0.1]:80": true, "8.8.8.8:443": false, "[2001:4860::8888]:443": false, "10.0.0.5:80": false} {
		err := testRunGuard("h", allow)("tcp", addr, nil)
		if (err == nil) != ok {
			t.Errorf("%s: err %v, want allowed %v", addr, err, ok)
		}
	}
}
