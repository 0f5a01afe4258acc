package app

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
	"github.com/three-good-sources/3gs/internal/stdio"
)

// startCatalog starts a server of a registry of n categories whose
// instructions list catalogs of at most max.
func startCatalog(t *testing.T, n, max int) (*Server, *Config) {
	t.Helper()
	cfg := testConfig(t)
	if err := os.WriteFile(cfg.Registry, registrytest.Encode(n, 3), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.CatalogMax = max
	srv, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv, cfg
}

// reloadWith writes a registry of n categories to the server's file and
// reloads it, as reload_registry does.
func reloadWith(t *testing.T, srv *Server, cfg *Config, n int) {
	t.Helper()
	if err := os.WriteFile(cfg.Registry, registrytest.Encode(n, 3), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Tools.ReloadRegistry(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := len(srv.Tools.Published().Registry.Categories()); got != n {
		t.Fatalf("reloaded %d categories, want %d", got, n)
	}
}

// stdioClient is one stdio session of a server, driven line by line.
type stdioClient struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
	next int
}

func newStdioClient(t *testing.T, srv *mcp.Server) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	c.out.Buffer(nil, 1<<20)
	go func() {
		c.done <- stdio.Serve(context.Background(), srv.NewSession(), inR, outW, stdio.Options{})
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		if err := <-c.done; err != nil {
			t.Error(err)
		}
	})
	return c
}

// read returns the next line the server writes, decoded.
func (c *stdioClient) read() map[string]any {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("no line from the server: %v", c.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		c.t.Fatalf("%v: %s", err, c.out.Bytes())
	}
	return m
}

// request sends method with params and returns its response, and the
// notifications the server wrote before it.
func (c *stdioClient) request(method, params string) (resp map[string]any, notes []string) {
	c.t.Helper()
	c.next++
	id := c.next
	line := `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"` + method + `","params":` + params + "}\n"
	if _, err := io.WriteString(c.in, line); err != nil {
		c.t.Fatal(err)
	}
	for {
		m := c.read()
		if m["id"] == nil {
			notes = append(notes, m["method"].(string))
			continue
		}
		if m["id"].(float64) != float64(id) {
			c.t.Fatalf("answer to %v, want %d: %v", m["id"], id, m)
		}
		return m, notes
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

const (
	initParams = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`
	noMatch    = `{"name":"get_sources","arguments":{"query":"replication for a beginner zzqx"}}`
)

// instructionsOf is what an initialize response tells the model.
func instructionsOf(t *testing.T, resp map[string]any) string {
	t.Helper()
	res, ok := resp["result"].(map[string]any)
	if !ok {
		t.Fatalf("initialize: %v", resp)
	}
	return res["instructions"].(string)
}

// catalogOf is a not-confident get_sources answer's catalog_version ("" for
// none) and text.
func catalogOf(t *testing.T, resp map[string]any) (string, string) {
	t.Helper()
	res, ok := resp["result"].(map[string]any)
	if !ok || res["isError"] != true {
		t.Fatalf("get_sources: %v", resp)
	}
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	v, _ := res["structuredContent"].(map[string]any)["catalog_version"].(string)
	return v, text
}

// A stdio session keeps the catalog it was given: pointed at while the
// registry is the one it was given, listed with a word of the change
// after a reload in the middle of it. A session begun after the reload
// gets the new catalog in its instructions and is pointed at it.
func TestStdioSessionCatalogAcrossAReload(t *testing.T) {
	srv, cfg := startCatalog(t, 40, 150)
	v1, _, _ := srv.Tools.Catalog(150)
	a := newStdioClient(t, srv.MCP)
	init, _ := a.request("initialize", initParams)
	if !strings.Contains(instructionsOf(t, init), "Categories (registry "+v1+")") {
		t.Fatalf("instructions without the catalog of %s: %v", v1, init)
	}
	if got, text := catalogOf(t, first(a.request("tools/call", noMatch))); got != v1 {
		t.Fatalf("before the reload: catalog_version %q, want %q:\n%s", got, v1, text)
	}
	reloadWith(t, srv, cfg, 39)
	v2, _, _ := srv.Tools.Catalog(150)
	got, text := catalogOf(t, first(a.request("tools/call", noMatch)))
	if got != "" || !strings.Contains(text, "changed since this session began") || !strings.Contains(text, "The registry's 39 categories") {
		t.Errorf("after a reload in the middle of the session: catalog_version %q:\n%s", got, text)
	}
	b := newStdioClient(t, srv.MCP)
	if ins := instructionsOf(t, first(b.request("initialize", initParams))); !strings.Contains(ins, "Categories (registry "+v2+")") || strings.Contains(ins, v1) {
		t.Errorf("a session begun after the reload is not given its catalog (%s):\n%s", v2, ins)
	}
	if got, text := catalogOf(t, first(b.request("tools/call", noMatch))); got != v2 {
		t.Errorf("a session begun after the reload: catalog_version %q, want %q:\n%s", got, v2, text)
	}
}

// Past --catalog-max after a reload: the session given the small
// registry's catalog gets the list, and a session begun then is given no
// catalog and gets the list too.
func TestSessionCatalogOnceTheRegistryGrowsPastTheLimit(t *testing.T) {
	srv, cfg := startCatalog(t, 40, 40)
	a := newStdioClient(t, srv.MCP)
	a.request("initialize", initParams)
	if got, _ := catalogOf(t, first(a.request("tools/call", noMatch))); got == "" {
		t.Fatal("no catalog at 40 categories with a limit of 40")
	}
	reloadWith(t, srv, cfg, 41)
	if got, text := catalogOf(t, first(a.request("tools/call", noMatch))); got != "" || !strings.Contains(text, "The registry's 41 categories") {
		t.Errorf("the session begun at 40: catalog_version %q:\n%s", got, text)
	}
	b := newStdioClient(t, srv.MCP)
	if ins := instructionsOf(t, first(b.request("initialize", initParams))); strings.Contains(ins, "Categories (registry") {
		t.Errorf("a session begun at 41 categories is given a catalog:\n%s", ins)
	}
	if got, text := catalogOf(t, first(b.request("tools/call", noMatch))); got != "" || strings.Contains(text, "changed since") || !strings.Contains(text, "The registry's 41 categories") {
		t.Errorf("the session begun at 41: catalog_version %q:\n%s", got, text)
	}
}

func first[A, B any](a A, _ B) A { return a }

// httpPost sends body to the HTTP server's /mcp in session (none when
// ""), and returns the decoded answer and the session id it names.
func httpPost(t *testing.T, h http.Handler, session, body string) (map[string]any, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("%d %v: %s", w.Code, err, w.Body.Bytes())
	}
	return m, w.Header().Get("Mcp-Session-Id")
}

// The same over Streamable HTTP: a legacy session keeps the catalog it
// was given across a reload in its middle, and a session opened after it
// gets the new one.
func TestHTTPSessionCatalogAcrossAReload(t *testing.T) {
	srv, cfg := startCatalog(t, 40, 150)
	hs := httpserver.New(httpserver.Options{})
	hs.SetBackend(httpserver.Backend{MCP: srv.MCP, Published: srv.Tools.Published})
	h := hs.Handler()
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + initParams + `}`
	callBody := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + noMatch + `}`
	v1, _, _ := srv.Tools.Catalog(150)
	init, a := httpPost(t, h, "", initBody)
	if a == "" || !strings.Contains(instructionsOf(t, init), "Categories (registry "+v1+")") {
		t.Fatalf("initialize (session %q): %v", a, init)
	}
	if got, text := catalogOf(t, first(httpPost(t, h, a, callBody))); got != v1 {
		t.Fatalf("before the reload: catalog_version %q, want %q:\n%s", got, v1, text)
	}
	reloadWith(t, srv, cfg, 39)
	v2, _, _ := srv.Tools.Catalog(150)
	if got, text := catalogOf(t, first(httpPost(t, h, a, callBody))); got != "" || !strings.Contains(text, "changed since this session began") {
		t.Errorf("after a reload in the middle of the session: catalog_version %q:\n%s", got, text)
	}
	init, b := httpPost(t, h, "", initBody)
	if !strings.Contains(instructionsOf(t, init), "Categories (registry "+v2+")") {
		t.Errorf("a session opened after the reload is not given its catalog (%s): %v", v2, init)
	}
	if got, text := catalogOf(t, first(httpPost(t, h, b, callBody))); got != v2 {
		t.Errorf("a session opened after the reload: catalog_version %q, want %q:\n%s", got, v2, text)
	}
}
