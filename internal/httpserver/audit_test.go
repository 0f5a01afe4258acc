package httpserver_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testserver"
	"github.com/three-good-sources/3gs/internal/tools"
)

// auditServer serves an editable copy of the embedded registry over HTTP,
// as 3gs serve --registry --http does, after the curator changes: upsert
// sqlite-a, sqlite-b, sqlite-c, remove sqlite-a, upsert sqlite-b again.
// The log then holds six entries (a start entry first); the last result
// is its path.
func auditServer(t *testing.T) (*httptest.Server, *tools.Handlers, string) {
	t.Helper()
	h, path := testserver.Handlers(t, testserver.Options{Editable: true})
	for _, slug := range []string{"sqlite-a", "sqlite-b", "sqlite-c", "-sqlite-a", "sqlite-b"} {
		auditChange(t, h, slug)
	}
	return auditHTTP(t, h, h), h, path + ".audit.jsonl"
}

// auditHTTP serves h over HTTP with a as the backend's audit log.
func auditHTTP(t *testing.T, h *tools.Handlers, a httpserver.Auditor) *httptest.Server {
	t.Helper()
	srv := httpserver.New(httpserver.Options{Version: "test"})
	b := httpserver.Backend{MCP: mcp.NewServer(mcp.Config{Handlers: h, Version: "test", Log: slog.New(slog.DiscardHandler)}), Published: h.Published}
	if a != nil {
		b.Audit = a
	}
	srv.SetBackend(b)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// auditChange upserts the category slug, or removes it when slug starts
// with "-", as the admin "root".
func auditChange(t *testing.T, h *tools.Handlers, slug string) {
	t.Helper()
	ctx := auth.WithCaller(context.Background(), auth.Caller{Name: "root", Presented: true})
	var err error
	if rest, ok := strings.CutPrefix(slug, "-"); ok {
		_, err = h.RemoveCategory(ctx, &gen.RemoveCategoryInput{Slug: rest})
	} else {
		_, err = h.UpsertCategory(ctx, &gen.UpsertCategoryInput{Slug: slug, Category: gen.Category{
			Name: "SQLite " + slug, Description: "Using SQLite, the embedded SQL database.",
			QueryPatterns: []string{"learn sqlite", "sqlite tutorial", "embedded sql database"},
			Sources: []gen.Source{
				{Rank: 1, Name: "SQLite documentation", URL: "https://sqlite.org/docs.html", Type: "documentation", Why: "Its authors explain every feature."},
				{Rank: 2, Name: "SQLite Tutorial", URL: "https://www.sqlitetutorial.net/", Type: "tutorial", Why: "Works through SQL with SQLite step by step."},
				{Rank: 3, Name: "SQLite Forum", URL: "https://sqlite.org/forum/", Type: "forum", Why: "Where the developers answer questions."},
			},
		}})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// auditLines are the lines of the log file, each with its newline.
func auditLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	return lines[:len(lines)-1] // after the last newline: ""
}

// auditGet sends method to path with headers (name, value pairs) and reads the
// whole answer.
func auditGet(t *testing.T, ts *httptest.Server, method, path string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, b := testkit.Do(t, ts.Client(), req)
	return resp, string(b)
}

// The whole log comes back byte for byte as stored, as JSON Lines, and a
// reader can verify it as a log; following Audit-Next pages through it.
func TestAuditPages(t *testing.T) {
	ts, _, logPath := auditServer(t)
	lines := auditLines(t, logPath)
	if len(lines) != 6 {
		t.Fatalf("the log has %d lines, want 6", len(lines))
	}
	resp, body := auditGet(t, ts, "GET", "/audit")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/jsonl; charset=utf-8" || resp.Header.Get("Audit-Next") != "" || resp.Header.Get("Etag") == "" {
		t.Fatalf("GET /audit: %d %v", resp.StatusCode, resp.Header)
	}
	if body != strings.Join(lines, "") {
		t.Errorf("GET /audit is not the log as stored:\n%s\nwant\n%s", body, strings.Join(lines, ""))
	}
	if rep, err := auditlog.Verify(strings.NewReader(body), auditlog.Options{}); err != nil || rep.Entries != 6 || rep.Torn != 0 {
		t.Errorf("the body does not verify as a log: %+v %v", rep, err)
	}

	var got strings.Builder
	path, pages := "/audit?limit=4", 0
	for {
		resp, body := auditGet(t, ts, "GET", path)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		pages++
		got.WriteString(body)
		next := resp.Header.Get("Audit-Next")
		if next == "" {
			break
		}
		path = "/audit?limit=4&since=" + next
	}
	if pages != 2 || got.String() != strings.Join(lines, "") {
		t.Errorf("%d pages gave\n%s", pages, got.String())
	}
	if resp, body := auditGet(t, ts, "GET", "/audit?since=2&limit=2"); resp.Header.Get("Audit-Next") != "4" || body != lines[2]+lines[3] {
		t.Errorf("since=2&limit=2: next %q, body\n%s", resp.Header.Get("Audit-Next"), body)
	}
	if resp, body := auditGet(t, ts, "GET", "/audit?since=6"); resp.StatusCode != 200 || body != "" || resp.Header.Get("Content-Length") != "0" {
		t.Errorf("since=6: %d %q", resp.StatusCode, body)
	}
	// HEAD has the headers of GET and no body.
	head, body := auditGet(t, ts, "HEAD", "/audit?limit=4")
	if head.StatusCode != 200 || body != "" || head.Header.Get("Audit-Next") != "4" || head.Header.Get("Content-Length") != itoa(len(strings.Join(lines[:4], ""))) {
		t.Errorf("HEAD /audit: %d %v", head.StatusCode, head.Header)
	}
	if resp, _ := auditGet(t, ts, "POST", "/audit"); resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /audit: %d", resp.StatusCode)
	}
}

// slug and action select entries; they combine.
func TestAuditFilters(t *testing.T) {
	ts, _, logPath := auditServer(t)
	lines := auditLines(t, logPath)
	for path, want := range map[string][]int{
		"/audit?slug=sqlite-b":               {3, 6},
		"/audit?slug=sqlite-a":               {2, 5},
		"/audit?action=remove":               {5},
		"/audit?action=start":                {1},
		"/audit?action=upsert&slug=sqlite-a": {2},
		"/audit?action=upsert&since=3":       {4, 6},
		"/audit?slug=sqlite-b&limit=1":       {3},
		"/audit?slug=nothing":                nil,
	} {
		resp, body := auditGet(t, ts, "GET", path)
		var wantBody string
		for _, seq := range want {
			wantBody += lines[seq-1]
		}
		if resp.StatusCode != 200 || body != wantBody {
			t.Errorf("%s: %d\n%s\nwant\n%s", path, resp.StatusCode, body, wantBody)
		}
	}
	if resp, _ := auditGet(t, ts, "GET", "/audit?slug=sqlite-b&limit=1"); resp.Header.Get("Audit-Next") != "3" {
		t.Errorf("slug=sqlite-b&limit=1: Audit-Next %q, want 3", resp.Header.Get("Audit-Next"))
	}
}

// The ETag stands for the served head and the query: sent back, it gets
// 304 until the log moves on; another query has another tag.
func TestAuditNotModified(t *testing.T) {
	ts, h, _ := auditServer(t)
	resp, _ := auditGet(t, ts, "GET", "/audit?slug=sqlite-b")
	etag := resp.Header.Get("Etag")
	if !strings.HasPrefix(etag, `"`) {
		t.Fatalf("ETag %q", etag)
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		if resp, body := auditGet(t, ts, "GET", "/audit?slug=sqlite-b", "If-None-Match", inm); resp.StatusCode != 304 || body != "" || resp.Header.Get("Etag") != etag {
			t.Errorf("If-None-Match %s: %d %q", inm, resp.StatusCode, body)
		}
	}
	// The default limit and an explicit one of 100 are the same query.
	if resp, _ := auditGet(t, ts, "GET", "/audit?limit=100&slug=sqlite-b", "If-None-Match", etag); resp.StatusCode != 304 {
		t.Errorf("same query spelt otherwise: %d", resp.StatusCode)
	}
	if resp, _ := auditGet(t, ts, "GET", "/audit?slug=sqlite-c", "If-None-Match", etag); resp.StatusCode != 200 || resp.Header.Get("Etag") == etag {
		t.Errorf("another query: %d, tag %s", resp.StatusCode, resp.Header.Get("Etag"))
	}
	auditChange(t, h, "sqlite-b")
	resp, body := auditGet(t, ts, "GET", "/audit?slug=sqlite-b", "If-None-Match", etag)
	if resp.StatusCode != 200 || resp.Header.Get("Etag") == etag || strings.Count(body, "\n") != 3 {
		t.Errorf("after a change: %d, tag %s\n%s", resp.StatusCode, resp.Header.Get("Etag"), body)
	}
}

// Parameters that are not what the tool get_audit_log accepts are 400,
// with a message naming the parameter and what is wrong.
func TestAuditBadParameters(t *testing.T) {
	ts, _, _ := auditServer(t)
	for path, want := range map[string]string{
		"/audit?since=-1":              `since: \"-1\" is not a whole number`,
		"/audit?since=abc":             `since: \"abc\" is not a whole number`,
		"/audit?since=1e3":             `since: \"1e3\" is not a whole number`,
		"/audit?since=":                `since: \"\" is not a whole number`,
		"/audit?since=99999999999":     `since: \"99999999999\" is not a whole number`,
		"/audit?limit=0":               "limit: ",
		"/audit?limit=1001":            "limit: ",
		"/audit?action=delete":         "action: ",
		"/audit?slug=Not_A_Slug":       "slug: ",
		"/audit?slug=":                 "slug: ",
		"/audit?page=2":                `unknown parameter \"page\": /audit takes since, slug, action, limit`,
		"/audit?since=1&since=2":       "since: given 2 times",
		"/audit?slug=a&limit=x&zz=1":   `unknown parameter \"zz\"`,
		"/audit?slug=%22%7D%2C%22x%22": "slug: ",
	} {
		resp, body := auditGet(t, ts, "GET", path)
		if resp.StatusCode != 400 || !strings.Contains(body, `{"error":"`+want) {
			t.Errorf("%s: %d %s, want 400 saying %s", path, resp.StatusCode, body, want)
		}
	}
	// Leading zeros are still a number.
	if resp, body := auditGet(t, ts, "GET", "/audit?since=005&limit=01"); resp.StatusCode != 200 || strings.Count(body, "\n") != 1 {
		t.Errorf("since=005&limit=01: %d %s", resp.StatusCode, body)
	}
}

// An entry written after the served head (a change interrupted between
// its log entry and its registry write) is not served, by /audit or
// /audit/head.
func TestAuditServesUpToTheHead(t *testing.T) {
	ts, _, path := auditServer(t)
	lines := auditLines(t, path)
	rep, err := auditlog.Read(path, auditlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before, zslug := rep.Last.After, "sqlite-z"
	pending := &gen.AuditEntry{Time: time.Date(2026, 12, 24, 12, 0, 0, 0, time.UTC), Action: gen.AuditActionUpsert, Slug: &zslug, Actor: "root", Version: "9.9.9", Before: &before, After: strings.Repeat("0", 64)}
	if _, err := auditlog.Open(path, rep).Append(nil, pending); err != nil {
		t.Fatal(err)
	}
	if n := len(auditLines(t, path)); n != 7 {
		t.Fatalf("the file holds %d lines, want 7", n)
	}
	if resp, body := auditGet(t, ts, "GET", "/audit"); resp.StatusCode != 200 || body != strings.Join(lines, "") {
		t.Errorf("GET /audit served past the head:\n%s", body)
	}
	if _, body := auditGet(t, ts, "GET", "/audit?slug=sqlite-z"); body != "" {
		t.Errorf("the pending entry is served: %s", body)
	}
	_, body := auditGet(t, ts, "GET", "/audit/head")
	if doc, err := gen.DecodeAuditHead([]byte(body)); err != nil || doc.Seq != 6 || *doc.Hash != auditlog.HashLine([]byte(strings.TrimSuffix(lines[5], "\n"))) {
		t.Errorf("/audit/head: %s %v", body, err)
	}
}

// /audit/head names the head entry and the registry served with it.
func TestAuditHead(t *testing.T) {
	ts, h, logPath := auditServer(t)
	lines := auditLines(t, logPath)
	resp, body := auditGet(t, ts, "GET", "/audit/head")
	doc, err := gen.DecodeAuditHead([]byte(body))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || err != nil {
		t.Fatalf("GET /audit/head: %d %s %v", resp.StatusCode, body, err)
	}
	last, err := gen.DecodeAuditEntry([]byte(strings.TrimSuffix(lines[5], "\n")))
	if err != nil {
		t.Fatal(err)
	}
	p := h.Published()
	if doc.Seq != 6 || doc.Hash == nil || *doc.Hash != auditlog.HashLine([]byte(strings.TrimSuffix(lines[5], "\n"))) ||
		doc.RegistrySHA256 != p.Registry.SHA256() || doc.RegistrySHA256 != last.After || doc.RegistryVersion != p.Registry.Version() {
		t.Errorf("head %s; want seq 6 and the registry %s (%s)", body, p.Registry.SHA256(), p.Registry.Version())
	}
	if resp, body := auditGet(t, ts, "HEAD", "/audit/head"); resp.StatusCode != 200 || body != "" {
		t.Errorf("HEAD /audit/head: %d %q", resp.StatusCode, body)
	}

	// Before any change the log is empty: seq 0, no hash, no lines.
	fresh, _ := testserver.Handlers(t, testserver.Options{Editable: true})
	ts = auditHTTP(t, fresh, fresh)
	_, body = auditGet(t, ts, "GET", "/audit/head")
	if doc, err := gen.DecodeAuditHead([]byte(body)); err != nil || doc.Seq != 0 || doc.Hash != nil || doc.RegistrySHA256 != fresh.Published().Registry.SHA256() {
		t.Errorf("empty log head: %s %v", body, err)
	}
	if resp, body := auditGet(t, ts, "GET", "/audit"); resp.StatusCode != 200 || body != "" {
		t.Errorf("empty log: %d %q", resp.StatusCode, body)
	}
}

// A server on the embedded registry has no log: 404 with a message, and
// so has a backend that names no audit log at all.
func TestAuditNoLog(t *testing.T) {
	h, _ := testserver.Handlers(t, testserver.Options{})
	for ts, want := range map[*httptest.Server]string{
		auditHTTP(t, h, h):   "keeps no audit log: it serves the registry built into 3gs",
		auditHTTP(t, h, nil): "serves no audit log",
	} {
		for _, path := range []string{"/audit", "/audit/head", "/audit?since=1"} {
			resp, body := auditGet(t, ts, "GET", path)
			if resp.StatusCode != 404 || !strings.Contains(body, want) {
				t.Errorf("%s: %d %s, want 404 saying %s", path, resp.StatusCode, body, want)
			}
		}
	}
}

// blockingAuditor holds every request until released, so a test can fill
// the audit places.
type blockingAuditor struct {
	httpserver.Auditor
	entered chan struct{}
	release chan struct{}
}

func (b *blockingAuditor) AuditPage(q auditlog.Query) (*auditlog.Page, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.Auditor.AuditPage(q)
}

func (b *blockingAuditor) AuditHead() (auditlog.Head, store.Served, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.Auditor.AuditHead()
}

// /audit and /audit/head take a place among --max-concurrent of their
// own: past it they answer 503 with Retry-After, and the places of /mcp
// stay free for agents.
func TestAuditAdmission(t *testing.T) {
	h, _ := testserver.Handlers(t, testserver.Options{Editable: true})
	auditChange(t, h, "sqlite-a")
	blocked := &blockingAuditor{Auditor: h, entered: make(chan struct{}, 4), release: make(chan struct{})}
	srv := httpserver.New(httpserver.Options{Version: "test", MaxConcurrent: 2})
	srv.SetBackend(httpserver.Backend{MCP: mcp.NewServer(mcp.Config{Handlers: h, Version: "test", Log: slog.New(slog.DiscardHandler)}), Published: h.Published, Audit: blocked})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	done := make(chan int, 2)
	for _, path := range []string{"/audit?slug=nope", "/audit/head"} {
		go func() {
			resp, err := http.Get(ts.URL + path)
			if err != nil {
				done <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			done <- resp.StatusCode
		}()
	}
	for range 2 {
		select {
		case <-blocked.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the first two audit requests never started")
		}
	}
	for _, path := range []string{"/audit?slug=nope", "/audit/head"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "--max-concurrent") {
			t.Errorf("%s with every audit place taken: %d, Retry-After %q: %s", path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	// Agents still get answers meanwhile.
	if code := mcpStatus(t, ts.URL); code != http.StatusOK {
		t.Errorf("/mcp while the audit places are full: %d", code)
	}
	close(blocked.release)
	for range 2 {
		if code := <-done; code != http.StatusOK {
			t.Errorf("an admitted audit request answered %d", code)
		}
	}
	resp, err := http.Get(ts.URL + "/audit/head")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after the places were given back: %d", resp.StatusCode)
	}
}

// mcpStatus is the HTTP status of a stateless tools/list on /mcp.
func mcpStatus(t *testing.T, base string) int {
	t.Helper()
	status, _ := testkit.PostMCP(t, base+"/mcp", "tools/list", nil)
	return status
}
