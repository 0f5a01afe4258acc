package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/linkcheck/linkchecktest"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// closedPorts are n loopback URLs at ports nothing listens on: a
// connection to each is refused, as everywhere on a machine without a
// network.
func closedPorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, "http://"+ln.Addr().String()+"/page")
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

// 3gs check, as a process: redirects that loop, go on past the bound or
// lead to another scheme or a link-local address are errors, never ok;
// a temporary chain reports where it ended; one server spelled three
// ways gets one request at a time.
func TestCheckRedirectsAndSpellings(t *testing.T) {
	bin := testkit.Binary(t)
	s := linkchecktest.NewSite(t, 0)
	var urls []string
	for _, p := range []string{"/loop", "/ping", "/to-file", "/to-metadata", "/far", "/chain"} {
		urls = append(urls, s.URL+p)
	}
	code, out, errOut, _ := runCheck(t, bin, writeRegistry(t, urls, s.URL), "--delay", "1ms", "--per-host", "4", "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	doc, err := gen.DecodeSourcehealth([]byte(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []struct{ status, reason string }{
		{"error", "redirect loop"}, {"error", "redirect loop"},
		{"error", "redirected to a refused address"}, {"error", "redirected to a refused address"},
		{"error", "too many redirects"}, {"gone", "redirects to a page that is http 404"},
	}
	for i, c := range doc.Sources {
		if string(c.Status) != want[i].status || c.Reason == nil || *c.Reason != want[i].reason {
			t.Errorf("%s: %s %v, want %s %q", c.URL, c.Status, c.Reason, want[i].status, want[i].reason)
		}
	}
	if c := doc.Sources[5]; c.HttpStatus == nil || *c.HttpStatus != 404 {
		t.Errorf("/chain: http_status %s, want the final 404", out)
	}

	p := linkchecktest.NewSite(t, 20*time.Millisecond)
	port := p.Listener.Addr().(*net.TCPAddr).Port
	var spelled []string
	for i := range 12 {
		host := []string{"127.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]"}[i%3]
		spelled = append(spelled, fmt.Sprintf("http://%s:%d/many/%d", host, port, i))
	}
	code, out, errOut, _ = runCheck(t, bin, writeRegistry(t, spelled, p.URL), "--delay", "1ms", "--concurrency", "16")
	if code != 0 || !strings.Contains(out, "12 sources checked: 12 ok") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if m := p.MaxInFlight.Load(); m != 1 {
		t.Errorf("%d requests in flight at once to one server spelled three ways, with the default --per-host 1", m)
	}
}

// 3gs check on a machine whose network is down (every connection
// refused) says so and exits 3, and marks nothing: the health file is
// left as the last check wrote it.
func TestCheckNetworkDown(t *testing.T) {
	bin := testkit.Binary(t)
	path := writeRegistry(t, closedPorts(t, 6), "http://127.0.0.1:1")
	health := sourcehealth.PathFor(path)
	const before = "the last check's outcome\n"
	if err := os.WriteFile(health, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut, _ := runCheck(t, bin, path, "--delay", "1ms", "--timeout", "5s")
	if code != 3 || !strings.Contains(errOut, "the network looks unavailable: 6 of 6 hosts could not be resolved or connected") ||
		!strings.Contains(errOut, "nothing was marked gone") || strings.Contains(out, "gone") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if b, _ := os.ReadFile(health); string(b) != before {
		t.Errorf("the health file was rewritten:\n%s", b)
	}
}

// serve --check-sources keeps the last check's health when a check finds
// the network unavailable: /health and get_sources say what they said.
func TestServeKeepsHealthWhenNetworkDown(t *testing.T) {
	t.Parallel() // a second or so of waiting on the background check
	bin := testkit.Binary(t)
	urls := closedPorts(t, 6)
	path := writeRegistry(t, urls, "http://127.0.0.1:1")
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	doc := &gen.Sourcehealth{CheckedAt: at, RegistryVersion: "1.0.0"}
	for i, u := range urls {
		doc.Sources = append(doc.Sources, gen.CheckedSource{Category: fmt.Sprintf("c%04d", i/3), Rank: i%3 + 1, URL: u, Status: gen.CheckStatusOk, CheckedAt: at})
	}
	sourcehealth.Count(doc)
	if err := sourcehealth.WritePublished(sourcehealth.PathFor(path), sourcehealth.Sign(doc, nil, time.Now(), time.Hour)); err != nil {
		t.Fatal(err)
	}
	p := testkit.Start(t, filepath.Dir(path), "serve", bin, "serve", "--http", "127.0.0.1:0", "--registry", path, "--check-sources", "1s")
	base := "http://" + p.WaitLog(t, testkit.Serving, 0, 30*time.Second)[1]
	p.WaitLog(t, regexp.MustCompile(`the network looks unavailable`), 0, 60*time.Second)
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var hs struct {
		Sources *struct{ Ok, Gone, Error int } `json:"sources"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&hs); err != nil || hs.Sources == nil || hs.Sources.Ok != 6 || hs.Sources.Gone+hs.Sources.Error != 0 {
		t.Errorf("/health sources after a check without network: %v %+v", err, hs.Sources)
	}
	if got, err := sourcehealth.Read(sourcehealth.PathFor(path)); err != nil || got == nil || got.Summary.Ok != 6 || got.CheckedAt != at {
		t.Errorf("health file: %v %+v", err, got)
	}
}

// serve --check-sources never tells agents "Health: ok" for a source
// whose redirects loop or lead to a file: URL or a link-local address:
// get_sources says error.
func TestServeBadRedirectsAreNotOK(t *testing.T) {
	t.Parallel() // a second or so of waiting on the background check
	bin := testkit.Binary(t)
	// Each source on a site of its own, so the default politeness (one
	// request a second per server) does not make the test wait.
	var urls []string
	for _, p := range []string{"/loop", "/to-file", "/to-metadata"} {
		urls = append(urls, linkchecktest.NewSite(t, 0).URL+p)
	}
	path := writeRegistry(t, urls, "http://127.0.0.1:1")
	p := testkit.Start(t, filepath.Dir(path), "serve", bin, "serve", "--http", "127.0.0.1:0", "--registry", path, "--check-sources", "1s")
	base := "http://" + p.WaitLog(t, testkit.Serving, 0, 30*time.Second)[1]
	p.WaitLog(t, regexp.MustCompile(`checked the sources`), 0, 60*time.Second)
	c := &http.Client{Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := post(ctx, c, base+"/mcp", statelessCall(7, "get_sources", map[string]string{"slug": "c0000"}), "")
	var msg struct {
		Result struct {
			Content           []struct{ Text string } `json:"content"`
			StructuredContent gen.GetSourcesOutput    `json:"structuredContent"`
		} `json:"result"`
	}
	if a.err != nil || json.Unmarshal(a.body, &msg) != nil || len(msg.Result.Content) == 0 {
		t.Fatalf("get_sources: %v %s", a.err, a.body)
	}
	for i, src := range msg.Result.StructuredContent.Sources {
		if src.Health == nil || src.Health.Status != gen.CheckStatusError {
			t.Errorf("%s: health %+v, want error", urls[i], src.Health)
		}
	}
	if text := msg.Result.Content[0].Text; strings.Contains(text, ": ok") {
		t.Errorf("agents are told a source is ok:\n%s", text)
	}
}
