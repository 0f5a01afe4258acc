package httpserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testserver"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/signature"
)

// TestHealth: the report follows schema/health.schema.json and names the
// registry served and its signature state.
func TestHealth(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	h.open()
	r := h.do("GET", "/health", "")
	if r.status != 200 || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %v", r.status, r.header)
	}
	health, err := gen.DecodeHealth(r.body)
	if err != nil {
		t.Fatalf("the report does not follow its schema: %v\n%s", err, r.body)
	}
	p := h.tools.Published()
	want := gen.HealthRegistry{Version: p.Registry.Version(), Updated: p.Registry.Updated(), Categories: len(p.Registry.Categories()), SHA256: p.Registry.SHA256(), Signed: true, Verified: true}
	if health.Status != gen.HealthStatusOk || health.Registry == nil || *health.Registry != want || health.Pubkey == nil || *health.Pubkey != p.Registry.Curator().Pubkey || health.Sessions == nil || *health.Sessions != 1 || health.ProtocolVersions[0] != "2026-07-28" || health.ContractVersion != gen.ContractVersion {
		t.Errorf("report %s", r.body)
	}
	if r := h.do("POST", "/health", "{}"); r.status != 405 || r.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /health: %d", r.status)
	}
}

// TestNotLoaded: before the registry is loaded, /health, /mcp and
// /registry answer 503.
func TestNotLoaded(t *testing.T) {
	srv := httpserver.New(httpserver.Options{Version: "test"})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	get := func(method, path string) (*http.Response, []byte) {
		return fetch(t, ts, method, path, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	}
	resp, body := get("GET", "/health")
	health, err := gen.DecodeHealth(body)
	if resp.StatusCode != 503 || err != nil || health.Status != gen.HealthStatusLoading || health.Registry != nil {
		t.Errorf("/health while loading: %d %s %v", resp.StatusCode, body, err)
	}
	for _, c := range []struct{ method, path string }{{"POST", "/mcp"}, {"GET", "/registry"}, {"GET", "/registry.sig"}} {
		if resp, body := get(c.method, c.path); resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s while loading: %d %s", c.method, c.path, resp.StatusCode, body)
		}
	}
}

// TestRegistryEndpoint: the exact bytes, with validators that make a
// conditional GET answer 304, and the signature beside them.
func TestRegistryEndpoint(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	r := h.do("GET", "/registry", "")
	if r.status != 200 || !bytes.Equal(r.body, frozen.Registry(frozen.Basic)) {
		t.Fatalf("GET /registry: %d, %d bytes, want the %d served", r.status, len(r.body), len(frozen.Registry(frozen.Basic)))
	}
	etag := r.header.Get("ETag")
	if etag != `"`+h.tools.Published().Registry.SHA256()+`"` {
		t.Errorf("ETag %s is not the SHA-256 of the bytes", etag)
	}
	lastModified := r.header.Get("Last-Modified")
	if lastModified != "Sun, 01 Nov 2026 10:00:00 GMT" {
		t.Errorf("Last-Modified %q", lastModified)
	}
	sig, err := base64.StdEncoding.DecodeString(r.header.Get("Registry-Signature"))
	if err != nil || !bytes.Equal(sig, frozen.Signature(frozen.Basic)) {
		t.Errorf("Registry-Signature header does not carry the signature: %v", err)
	}
	if _, err := signature.Verify(r.body, sig, nil); err != nil {
		t.Errorf("the bytes and signature served do not verify: %v", err)
	}
	for _, c := range []struct {
		name    string
		headers []string
		status  int
	}{
		{"If-None-Match, same", []string{"If-None-Match", etag}, 304},
		{"If-None-Match, among others", []string{"If-None-Match", `"other", ` + etag}, 304},
		{"If-None-Match, changed", []string{"If-None-Match", `"0000"`}, 200},
		{"If-Modified-Since, same", []string{"If-Modified-Since", lastModified}, 304},
		{"If-Modified-Since, earlier", []string{"If-Modified-Since", "Sat, 31 Oct 2026 10:00:00 GMT"}, 200},
		{"If-None-Match wins over If-Modified-Since", []string{"If-None-Match", `"0000"`, "If-Modified-Since", lastModified}, 200},
		{"range", []string{"Range", "bytes=0-9"}, 206},
	} {
		r := h.do("GET", "/registry", "", c.headers...)
		if r.status != c.status {
			t.Errorf("%s: %d, want %d", c.name, r.status, c.status)
		}
		if c.status == 304 && (len(r.body) != 0 || r.header.Get("ETag") != etag) {
			t.Errorf("%s: 304 with a body or without the ETag", c.name)
		}
	}
	if r := h.do("HEAD", "/registry", ""); r.status != 200 || len(r.body) != 0 || r.header.Get("Content-Length") == "" {
		t.Errorf("HEAD: %d", r.status)
	}
	s := h.do("GET", "/registry.sig", "")
	if s.status != 200 || !bytes.Equal(s.body, frozen.Signature(frozen.Basic)) {
		t.Errorf("GET /registry.sig: %d %s", s.status, s.body)
	}
	if r := h.do("GET", "/registry.sig", "", "If-None-Match", s.header.Get("ETag")); r.status != 304 {
		t.Errorf("conditional GET /registry.sig: %d", r.status)
	}
	if r := h.do("PUT", "/registry", "x"); r.status != 405 {
		t.Errorf("PUT /registry: %d", r.status)
	}
}

// TestProvenanceOverHTTP: get_provenance over HTTP tells the client to
// download the files from this server, and those URLs serve bytes that
// match the digest it names.
func TestProvenanceOverHTTP(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	body, headers := call(1, "get_provenance", `{}`)
	r := h.post(body, headers...)
	var v struct {
		Result struct {
			StructuredContent gen.GetProvenanceOutput `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatal(err)
	}
	out := v.Result.StructuredContent
	steps := out.Verification.Steps
	if len(steps) < 3 || steps[0].Run != "curl -fsS -o registry.json "+h.ts.URL+"/registry" || steps[1].Run != "curl -fsS -o registry.json.sig "+h.ts.URL+"/registry.sig" {
		t.Fatalf("steps do not start with the downloads from %s: %+v", h.ts.URL, steps)
	}
	if out.Verification.Command == nil || *out.Verification.Command != "3gs verify --pubkey "+strings.TrimPrefix(out.Curator.Pubkey, "pk:")+" registry.json registry.json.sig" {
		t.Errorf("command %v", out.Verification.Command)
	}
	got := h.do("GET", "/registry", "")
	if sha := h.tools.Published().Registry.SHA256(); out.RegistrySHA256 != sha || steps[2].Expect != sha || got.header.Get("ETag") != `"`+sha+`"` {
		t.Errorf("digests disagree")
	}
	// Behind a proxy, --public-url names the address clients use.
	p := newHarness(t, httpserver.Options{PublicURL: "https://mcp.example.org/3gs/"})
	r = p.post(body, headers...)
	if !strings.Contains(string(r.body), "curl -fsS -o registry.json https://mcp.example.org/3gs/registry") {
		t.Errorf("--public-url not used: %s", r.body)
	}
}

// TestShutdownDrains: once Serve's context ends the listener closes, a
// request already running finishes with its answer, and Serve returns nil.
func TestShutdownDrains(t *testing.T) {
	h := newHarness(t, httpserver.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.srv.Serve(ctx, ln) }()

	body, headers := call(1, "get_sources", `{"query":"block"}`)
	answer := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		for i := 0; i < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answer <- resp.Status + " " + string(b)
	}()
	<-h.tools.entered
	cancel()
	// New connections are refused once the listener is closed; the
	// request in flight still holds its handler.
	for {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) with a request in flight", err)
	default:
	}
	h.tools.release <- struct{}{}
	if a := <-answer; !strings.HasPrefix(a, "200 OK") || !strings.Contains(a, `"result"`) {
		t.Fatalf("the request in flight got %s", a)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestShutdownDeadline: a request that outlives the deadline is cut off
// and Serve says so.
func TestShutdownDeadline(t *testing.T) {
	h := newHarness(t, httpserver.Options{ShutdownTimeout: 1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.srv.Serve(ctx, ln) }()
	body, headers := call(1, "get_sources", `{"query":"block"}`)
	go func() {
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		for i := 0; i < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-h.tools.entered
	cancel()
	err = <-served
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Serve: %v, want a deadline error", err)
	}
	close(h.tools.release)
}

// TestUnsignedRegistry: without a signature there is no Registry-Signature
// header and /registry.sig is 404, and /health says so.
func TestUnsignedRegistry(t *testing.T) {
	h, _ := testserver.Handlers(t, testserver.Options{})
	srv := httpserver.New(httpserver.Options{Version: "test"})
	srv.SetBackend(httpserver.Backend{MCP: mcp.NewServer(mcp.Config{Handlers: h, Version: "test", Log: slog.New(slog.DiscardHandler)}), Published: h.Published})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	get := func(path string) (*http.Response, []byte) { return fetch(t, ts, "GET", path, "") }
	if resp, body := get("/registry"); resp.StatusCode != 200 || resp.Header.Get("Registry-Signature") != "" || !bytes.Equal(body, frozen.Registry(frozen.Basic)) {
		t.Errorf("/registry unsigned: %d, signature header %q", resp.StatusCode, resp.Header.Get("Registry-Signature"))
	}
	if resp, body := get("/registry.sig"); resp.StatusCode != 404 || !strings.Contains(string(body), "not signed") {
		t.Errorf("/registry.sig unsigned: %d %s", resp.StatusCode, body)
	}
	_, body := get("/health")
	if health, err := gen.DecodeHealth(body); err != nil || health.Registry.Signed || health.Registry.Verified {
		t.Errorf("/health unsigned: %s %v", body, err)
	}
}

// fetch sends one request to a bare test server, as an MCP client would
// (JSON in, JSON accepted), and reads the whole answer.
func fetch(t *testing.T, ts *httptest.Server, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}
