package fetch

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A POST sends its body and headers, is never redirected (a Location
// comes back as it came, the other side's choice), and its answer's body
// is read whatever the status, within the limit, under the same policy
// as a GET: Accept-Encoding identity, and the operator's literal address.
func TestPost(t *testing.T) {
	var got struct{ body, ctype, name, enc string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
			return
		case "/refuse":
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"error":"no"}`)
			return
		}
		b, _ := io.ReadAll(r.Body)
		got.body, got.ctype, got.name, got.enc = string(b), r.Header.Get("Content-Type"), r.Header.Get("Mcp-Name"), r.Header.Get("Accept-Encoding")
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	c := New(Options{})
	post := func(path string) *Response {
		t.Helper()
		resp, err := c.Get(ctx(t), Request{URL: srv.URL + path, Method: http.MethodPost, Body: []byte(`{"a":1}`), ContentType: "application/json",
			Header: http.Header{"Mcp-Name": {"get_proposal"}, "Accept-Encoding": {"gzip"}}, What: "node", Limit: 1 << 20, Operator: true})
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		return resp
	}
	if r := post("/mcp"); r.Status != 200 || string(r.Body) != `{"ok":true}` || got.body != `{"a":1}` || got.ctype != "application/json" || got.name != "get_proposal" || got.enc != "identity" {
		t.Errorf("POST: %d %q, server saw %+v", r.Status, r.Body, got)
	}
	if r := post("/moved"); r.Status != http.StatusTemporaryRedirect || r.Header.Get("Location") != "/mcp" {
		t.Errorf("a POST was redirected: %d %v", r.Status, r.Header)
	}
	if r := post("/refuse"); r.Status != http.StatusForbidden || string(r.Body) != `{"error":"no"}` {
		t.Errorf("a refused POST's body: %d %q", r.Status, r.Body)
	}
	// Nothing is posted to a URL another party gave, nor without a body
	// said to be something.
	for _, r := range []Request{
		{URL: srv.URL + "/mcp", Method: http.MethodPost, Body: []byte("{}"), ContentType: "application/json", What: "node", Limit: 100},
		{URL: srv.URL + "/mcp", Method: http.MethodPost, Operator: true, What: "node", Limit: 100},
		{URL: srv.URL + "/mcp", Method: http.MethodPost, Body: []byte("{}"), Operator: true, What: "node", Limit: 100},
	} {
		got.body = "untouched"
		if _, err := c.Get(ctx(t), r); err == nil || got.body != "untouched" {
			t.Errorf("POST %+v was sent", r)
		}
	}
}
