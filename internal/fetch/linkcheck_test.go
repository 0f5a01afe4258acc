package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// A link check sees a redirect instead of following it, asks with HEAD
// and names itself.
func TestNoRedirectHeadAndUserAgent(t *testing.T) {
	var gotUA, gotMethod string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUA, gotMethod = r.Header.Get("User-Agent"), r.Method
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Length", "5")
		w.Write([]byte("hello"))
	}))
	defer srv.Close()
	c := New(Options{UserAgent: "3gs-test/1 (curator Ada)", Operator: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	resp, err := c.Get(ctx, Request{URL: srv.URL + "/old", What: "page", Method: http.MethodHead, NoRedirect: true, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusMovedPermanently || resp.Header.Get("Location") != "/new" || resp.Body != nil {
		t.Fatalf("status %d, Location %q, body %q: want the 301 itself", resp.Status, resp.Header.Get("Location"), resp.Body)
	}
	if gotUA != "3gs-test/1 (curator Ada)" || gotMethod != http.MethodHead {
		t.Fatalf("User-Agent %q, method %q", gotUA, gotMethod)
	}
	// HEAD of a page with a Content-Length reads no body, and fails not.
	resp, err = c.Get(ctx, Request{URL: srv.URL + "/new", What: "page", Method: http.MethodHead, Limit: 10})
	if err != nil || resp.Status != 200 || resp.Body != nil || resp.Header.Get("Content-Length") != "5" {
		t.Fatalf("HEAD /new: %v, %+v", err, resp)
	}
	// Without NoRedirect the same client still follows a same-host one.
	resp, err = c.Get(ctx, Request{URL: srv.URL + "/old", What: "page", Limit: 10})
	if err != nil || resp.Status != 200 || string(resp.Body) != "hello" {
		t.Fatalf("GET /old followed: %v, %+v", err, resp)
	}
	if _, err := c.Get(ctx, Request{URL: srv.URL, What: "page", Method: "POST", Limit: 10}); err == nil {
		t.Fatal("POST was sent")
	}
}

func TestMayFollow(t *testing.T) {
	from, _ := url.Parse("http://127.0.0.1:8080/a")
	for _, c := range []struct {
		to string
		ok bool
	}{
		{"http://127.0.0.1:8080/b", true},        // same origin: the operator named it
		{"https://example.org/b", true},          // a name: checked when connecting
		{"http://169.254.169.254/latest", false}, // a non-public literal the other side sent
		{"http://127.0.0.1:9090/", false},        // another port of the same literal
		{"http://[::1]/", false},
		{"http://8.8.8.8/", true},
		{"ftp://example.org/", false},
		{"http:///nohost", false},
		{"http://127.0.0.\uff11:9090/", false},           // full-width digit: 127.0.0.1 once mapped
		{"http://169.254.169.25%EF%BC%94/latest", false}, // the same, percent-encoded
	} {
		to, err := url.Parse(c.to)
		if err != nil {
			t.Fatal(err)
		}
		if got := MayFollow(from, to); got != c.ok {
			t.Errorf("MayFollow(%s, %s) = %v, want %v", from, to, got, c.ok)
		}
	}
}
