package httpserver_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/pages"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/tools"
)

// pageTools are the tools a page server reads; wrap, when set, replaces
// what some of them answer.
func pageHandlers(t testing.TB, data, sig []byte) *tools.Handlers {
	t.Helper()
	reg, err := registry.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	return tools.New(tools.Config{
		Registry: reg, Matcher: matcher.New(reg), Threshold: tools.DefaultThreshold,
		Signature: signature.Check(reg, sig),
		Modified:  time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
	})
}

// pageServer serves pages over h (and MCP over h.Handlers).
func pageServer(t testing.TB, h *tools.Handlers, p pages.Tools, opt httpserver.Options) *httptest.Server {
	t.Helper()
	opt.Hosts = httpserver.LoopbackHosts
	srv := httpserver.New(opt)
	srv.SetBackend(httpserver.Backend{
		MCP:       mcp.NewServer(mcp.Config{Handlers: h, Version: "test", Log: slog.New(slog.DiscardHandler)}),
		Published: h.Published,
		Pages:     pages.New(pages.Config{Tools: p}),
	})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func basicPages(t testing.TB) *httptest.Server {
	h := pageHandlers(t, frozen.Registry(frozen.Basic), frozen.Signature(frozen.Basic))
	return pageServer(t, h, h, httpserver.Options{})
}

func getPage(t testing.TB, ts *httptest.Server, path string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// checkPageHeaders: every page carries the security headers.
func checkPageHeaders(t *testing.T, path string, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "style-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("%s: Content-Security-Policy %q lacks %q", path, csp, want)
		}
	}
	if strings.Contains(csp, "script-src") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("%s: Content-Security-Policy %q allows script or inline content", path, csp)
	}
	if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options = %q", path, got)
	}
	if got := h.Get("Referrer-Policy"); got != "no-referrer" {
		t.Errorf("%s: Referrer-Policy = %q", path, got)
	}
}

func TestPagesRender(t *testing.T) {
	ts := basicPages(t)
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/", []string{"<title>Three good sources, curated by 3gs tests (TEST KEY: public, never trusted) · 3gs</title>", "9 categories", `href="/c/rust-learning"`, "Learning Rust", "verified", ts.URL + "/mcp", `&#34;command&#34;: &#34;3gs&#34;`, `<form role="search"`}},
		{"/?q=learn+rust", []string{"Search: “learn rust”", `href="https://doc.rust-lang.org/book/"`, "Learning Rust"}},
		{"/c/rust-learning", []string{"<h1>Learning Rust</h1>", `href="https://doc.rust-lang.org/book/"`, `href="https://github.com/rust-lang/rustlings"`, "Health: unknown", "Propose a change", "propose_change"}},
		{"/provenance", []string{"<h1>Provenance</h1>", "pk:8j33hcqfktweq6kw58y6xkbrufpg6xo5h6oafewg15qqscjag6my", "verified", "Check it by hand", "no audit log"}},
		{"/network", []string{"<h1>Network</h1>", "endorses no other curator"}},
		{"/proposals", []string{"<h1>Proposals</h1>"}},
	} {
		status, h, body := getPage(t, ts, c.path)
		if status != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", c.path, status, body)
			continue
		}
		if ct := h.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", c.path, ct)
		}
		checkPageHeaders(t, c.path, h)
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: the page lacks %q", c.path, w)
			}
		}
		if strings.Contains(body, "<script") {
			t.Errorf("GET %s: the page has a script element", c.path)
		}
		for _, nav := range []string{`href="/provenance"`, `href="/network"`, `href="/proposals"`, `href="/static/` + pages.CSSName + `"`} {
			if !strings.Contains(body, nav) {
				t.Errorf("GET %s: the header lacks the link %s", c.path, nav)
			}
		}
	}
}

func TestPageSearchMisses(t *testing.T) {
	ts := basicPages(t)
	_, _, body := getPage(t, ts, "/?q="+url.QueryEscape("zzzz qqqq"))
	if !strings.Contains(body, "Not covered") {
		t.Errorf("a query sharing nothing with any category is not said to be not covered:\n%s", body)
	}
	// Candidates, as the agent would see them, with their descriptions.
	_, _, body = getPage(t, ts, "/?q="+url.QueryEscape("rust go"))
	if strings.Contains(body, "Not covered") || !strings.Contains(body, `href="/c/`) {
		t.Errorf("a query near categories shows no candidates:\n%s", body)
	}
	// The query is echoed only as text.
	_, _, body = getPage(t, ts, "/?q="+url.QueryEscape(`<img src=x onerror=alert(1)>`))
	if strings.Contains(body, "<img") || !strings.Contains(body, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("the query is not escaped:\n%s", body)
	}
	status, _, _ := getPage(t, ts, "/?q="+strings.Repeat("a", pages.MaxQuery+1))
	if status != http.StatusRequestURITooLong {
		t.Errorf("a query over %d bytes: %d, want 414", pages.MaxQuery, status)
	}
}

// A candidate the matcher put forward for the question's meaning alone,
// not for a word it shares, says so on the page as in the MCP answer:
// "crema" shares a word with cake-baking alone in the development set's
// registry, and espresso comes after it by meaning.
func TestPageMarksMeaningOnlyCandidates(t *testing.T) {
	data, err := os.ReadFile("../matcher/testdata/dev/registry.json")
	if err != nil {
		t.Fatal(err)
	}
	h := pageHandlers(t, data, nil)
	ts := pageServer(t, h, h, httpserver.Options{})
	_, _, body := getPage(t, ts, "/?q=crema")
	const mark = "(close in meaning only)"
	cake := strings.Index(body, `href="/c/cake-baking"`)
	espresso := strings.Index(body, `href="/c/espresso"`)
	if cake < 0 || espresso < cake {
		t.Fatalf("want cake-baking, then espresso, among the candidates:\n%s", body)
	}
	if strings.Contains(body[cake:espresso], mark) || !strings.Contains(body[espresso:], mark) {
		t.Errorf("want espresso, not cake-baking, marked %q:\n%s", mark, body)
	}
}

func TestPageUnknownSlug(t *testing.T) {
	ts := basicPages(t)
	status, h, body := getPage(t, ts, "/c/rust-lerning")
	if status != http.StatusNotFound {
		t.Fatalf("unknown slug: %d, want 404", status)
	}
	checkPageHeaders(t, "/c/rust-lerning", h)
	if !strings.Contains(body, `href="/c/rust-learning"`) {
		t.Errorf("the 404 page does not offer the slug spelled alike:\n%s", body)
	}
	status, _, body = getPage(t, ts, "/c/"+url.PathEscape("<b>x</b>"))
	if status != http.StatusNotFound || strings.Contains(body, "<b>x") || !strings.Contains(body, "&lt;b&gt;x&lt;/b&gt;") {
		t.Errorf("a slug written as markup: %d, not shown as text:\n%s", status, body)
	}
	if status, _, _ := getPage(t, ts, "/nowhere"); status != http.StatusNotFound {
		t.Errorf("GET /nowhere: %d, want 404", status)
	}
}

// TestPageEscapesCuratorText: a name written as markup shows as text.
func TestPageEscapesCuratorText(t *testing.T) {
	data := bytes.Replace(frozen.Registry(frozen.Basic), []byte(`"name": "Learning Rust"`), []byte(`"name": "<script>alert(1)</script>"`), 1)
	if bytes.Equal(data, frozen.Registry(frozen.Basic)) {
		t.Fatal("the frozen registry no longer names Learning Rust as the test expects")
	}
	h := pageHandlers(t, data, nil)
	ts := pageServer(t, h, h, httpserver.Options{})
	for _, path := range []string{"/", "/c/rust-learning", "/?q=learn+rust"} {
		_, _, body := getPage(t, ts, path)
		if strings.Contains(body, "<script>") {
			t.Errorf("GET %s: the category's name reached the page as markup", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("GET %s: the category's name is not shown as text:\n%s", path, body)
		}
	}
}

// A category page shows the curator's tags, and no tags line for a
// category without them.
func TestPageShowsTags(t *testing.T) {
	data := bytes.Replace(frozen.Registry(frozen.Basic), []byte(`"name": "Learning Rust"`), []byte(`"name": "Learning Rust", "tags": ["systems", "memory-safety"]`), 1)
	if bytes.Equal(data, frozen.Registry(frozen.Basic)) {
		t.Fatal("the frozen registry no longer names Learning Rust as the test expects")
	}
	h := pageHandlers(t, data, nil)
	ts := pageServer(t, h, h, httpserver.Options{})
	if _, _, body := getPage(t, ts, "/c/rust-learning"); !strings.Contains(body, "Tags: systems, memory-safety") {
		t.Errorf("/c/rust-learning does not show its tags:\n%s", body)
	}
	if _, _, body := getPage(t, ts, "/c/go-learning"); strings.Contains(body, "Tags:") {
		t.Errorf("/c/go-learning shows tags it has not:\n%s", body)
	}
}

// hostileSources answers get_sources with a source whose URL is not
// http(s), as a hand-edited or peer's registry might carry.
type hostileSources struct{ *tools.Handlers }

func (h hostileSources) GetSources(ctx context.Context, in *gen.GetSourcesInput) (*gen.GetSourcesOutput, error) {
	out, err := h.Handlers.GetSources(ctx, in)
	if err == nil && len(out.Sources) > 0 {
		out.Sources[0].URL = "javascript:alert(1)"
		out.Sources[1].URL = "data:text/html,<b>x</b>"
	}
	return out, err
}

func TestPageLinksOnlyHTTP(t *testing.T) {
	h := pageHandlers(t, frozen.Registry(frozen.Basic), frozen.Signature(frozen.Basic))
	ts := pageServer(t, h, hostileSources{h}, httpserver.Options{})
	_, _, body := getPage(t, ts, "/c/rust-learning")
	for _, bad := range []string{`href="javascript`, `href="data:`, `href="#ZgotmplZ"`} {
		if strings.Contains(body, bad) {
			t.Errorf("a URL that is not http(s) was rendered as a link (%s):\n%s", bad, body)
		}
	}
	if !strings.Contains(body, "javascript:alert(1)") {
		t.Errorf("the URL is not shown as text")
	}
	if !strings.Contains(body, `href="https://github.com/rust-lang/rustlings"`) {
		t.Errorf("the http(s) source lost its link")
	}
}

func TestPageStaticFiles(t *testing.T) {
	ts := basicPages(t)
	status, h, body := getPage(t, ts, "/static/"+pages.CSSName)
	if status != http.StatusOK || h.Get("Content-Type") != "text/css; charset=utf-8" || body != string(pages.CSS) {
		t.Fatalf("stylesheet: %d %q", status, h.Get("Content-Type"))
	}
	if cc := h.Get("Cache-Control"); !strings.Contains(cc, "immutable") || !strings.Contains(cc, "max-age=31536000") {
		t.Errorf("stylesheet Cache-Control %q: its name holds its hash, so it may be cached for good", cc)
	}
	if status, _, _ := getPage(t, ts, "/static/style.css"); status != http.StatusNotFound {
		t.Errorf("a stylesheet name without the hash: %d, want 404", status)
	}
	status, h, _ = getPage(t, ts, "/favicon.ico")
	if status != http.StatusOK || h.Get("Content-Type") != "image/svg+xml" || h.Get("Cache-Control") == "" {
		t.Errorf("favicon: %d %q %q", status, h.Get("Content-Type"), h.Get("Cache-Control"))
	}
	resp, err := ts.Client().Post(ts.URL+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d, want 405", resp.StatusCode)
	}
}

func TestRegistryAsPageForBrowsers(t *testing.T) {
	ts := basicPages(t)
	browser := "text/html,application/xhtml+xml,*/*;q=0.8"
	_, h, body := getPage(t, ts, "/registry", "Accept", browser, "Sec-Fetch-Dest", "document")
	if !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(body, "Learning Rust") {
		t.Errorf("a browser asking for /registry gets %q", h.Get("Content-Type"))
	}
	// A fetcher that accepts HTML (3gs checking a curator's link) is no
	// browser navigating: it gets the bytes.
	_, h, _ = getPage(t, ts, "/registry", "Accept", browser)
	if h.Get("Content-Type") != "application/json" {
		t.Errorf("a client accepting HTML without navigating gets %q, not the registry", h.Get("Content-Type"))
	}
	_, h, body = getPage(t, ts, "/registry")
	if h.Get("Content-Type") != "application/json" || !bytes.Equal([]byte(body), frozen.Registry(frozen.Basic)) {
		t.Errorf("a client not asking for HTML no longer gets the registry's bytes (%q)", h.Get("Content-Type"))
	}
	if !strings.Contains(h.Get("Vary"), "Accept") {
		t.Errorf("/registry answers by Accept without saying Vary: Accept")
	}
}

// TestPagesPaginate: a registry too large for one page lists a page of
// categories at a time.
func TestPagesPaginate(t *testing.T) {
	const n = 1000
	h := pageHandlers(t, registrytest.Encode(n, 5), nil)
	ts := pageServer(t, h, h, httpserver.Options{})
	pagesWanted := (n + pages.PageSize - 1) / pages.PageSize
	seen := map[string]bool{}
	for p := 1; p <= pagesWanted; p++ {
		status, _, body := getPage(t, ts, "/?page="+itoa(p))
		if status != http.StatusOK {
			t.Fatalf("page %d: %d", p, status)
		}
		links := strings.Count(body, `href="/c/`)
		if links > pages.PageSize {
			t.Errorf("page %d links %d categories, more than %d", p, links, pages.PageSize)
		}
		for _, part := range strings.Split(body, `href="/c/`)[1:] {
			seen[part[:strings.IndexByte(part, '"')]] = true
		}
		if hasNext := strings.Contains(body, `rel="next"`); hasNext != (p < pagesWanted) {
			t.Errorf("page %d: next link %v", p, hasNext)
		}
	}
	if len(seen) != n {
		t.Errorf("the pages list %d categories in all, want %d", len(seen), n)
	}
	if status, _, _ := getPage(t, ts, "/?page="+itoa(pagesWanted+1)); status != http.StatusNotFound {
		t.Errorf("a page past the last: %d, want 404", status)
	}
	if status, _, _ := getPage(t, ts, "/?page=x"); status != http.StatusBadRequest {
		t.Errorf("page=x: %d, want 400", status)
	}
}

// TestPagesAdmission: pages take places of their own, --max-concurrent
// of them; past that, 503 while the others run.
func TestPagesAdmission(t *testing.T) {
	h := pageHandlers(t, frozen.Registry(frozen.Basic), frozen.Signature(frozen.Basic))
	held := &controlled{Handlers: h, entered: make(chan string, 1), release: make(chan struct{})}
	ts := pageServer(t, h, held, httpserver.Options{MaxConcurrent: 1})
	done := make(chan int)
	go func() {
		status, _, _ := getPage(t, ts, "/?q=block")
		done <- status
	}()
	<-held.entered
	status, h2, _ := getPage(t, ts, "/c/rust-learning")
	if status != http.StatusServiceUnavailable || h2.Get("Retry-After") == "" {
		t.Errorf("a page past --max-concurrent: %d (Retry-After %q), want 503", status, h2.Get("Retry-After"))
	}
	// MCP keeps its own places.
	if status, _, _ := getPage(t, ts, "/health"); status != http.StatusOK {
		t.Errorf("/health while pages are busy: %d", status)
	}
	close(held.release)
	if s := <-done; s != http.StatusOK {
		t.Errorf("the held page: %d", s)
	}
}
