package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/linkcheck/linkchecktest"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// runCheck runs the built binary's 3gs check and returns its exit code,
// stdout, stderr and peak RSS in KiB.
func runCheck(t *testing.T, bin string, args ...string) (int, string, string, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"check"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("3gs check %v did not finish in time\n%s", args, errOut.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return code, out.String(), errOut.String(), rss
}

func writeRegistry(t *testing.T, urls []string, base string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registry.json")
	if err := os.WriteFile(path, linkchecktest.Registry(urls, base), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// 3gs check, as a process, classifies a page of each kind on a loopback
// server, exits 1, prints the edit for each permanent redirect, and
// keeps to --per-host requests in flight to the one host.
func TestCheckClassifiesAndIsPolite(t *testing.T) {
	t.Parallel() // seconds of waiting on the stalled page, in its own directory and server
	bin := testkit.Binary(t)
	s := linkchecktest.NewSite(t, 0)
	var urls []string
	for _, p := range []string{"/ok", "/404", "/410", "/old", "/temp", "/500", "/stall", "/nohead", "/temp307"} {
		urls = append(urls, s.URL+p)
	}
	path := writeRegistry(t, urls, s.URL)
	code, out, errOut, _ := runCheck(t, bin, path, "--delay", "1ms", "--timeout", "2s", "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	doc, err := gen.DecodeSourcehealth([]byte(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []string{"ok", "gone", "gone", "redirected", "ok", "error", "error", "ok", "ok"}
	for i, c := range doc.Sources {
		if string(c.Status) != want[i] {
			t.Errorf("%s: %s, want %s", c.URL, c.Status, want[i])
		}
	}
	if r := doc.Sources[3]; r.Location == nil || *r.Location != s.URL+"/new" {
		t.Errorf("/old: %+v", r)
	}
	if r := doc.Sources[6]; r.Reason == nil || *r.Reason != "timeout" {
		t.Errorf("/stall: %+v", r)
	}
	if m := s.MaxInFlight.Load(); m != 1 {
		t.Errorf("%d requests in flight at once to one host with the default --per-host 1", m)
	}

	// Thirty pages of one host, at most two at a time.
	p2 := linkchecktest.NewSite(t, 20*time.Millisecond)
	var thirty []string
	for i := range 30 {
		thirty = append(thirty, fmt.Sprintf("%s/many/%d", p2.URL, i))
	}
	many := writeRegistry(t, thirty, p2.URL)
	code, out, errOut, _ = runCheck(t, bin, many, "--per-host", "2", "--concurrency", "16", "--delay", "1ms")
	if code != 0 || !strings.Contains(out, "30 sources checked: 30 ok") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if m := p2.MaxInFlight.Load(); m > 2 || m < 1 {
		t.Errorf("%d requests in flight at once to one host with --per-host 2", m)
	}
}

// A check of 5,000 sources on loopback finishes within its bound, and
// its peak RSS is about that of a check of 500.
func TestCheck5000Sources(t *testing.T) {
	testkit.Long(t, "it checks 5,000 sources")
	bin := testkit.Binary(t)
	// Ten hosts (ports), so --per-host 4 still lets 32 run at once.
	var sites []*linkchecktest.Site
	for range 10 {
		sites = append(sites, linkchecktest.NewSite(t, 0))
	}
	measure := func(n int) (time.Duration, int64) {
		n = (n + 2) / 3 * 3 // whole categories
		urls := make([]string, n)
		for i := range urls {
			urls[i] = fmt.Sprintf("%s/many/%d", sites[i%len(sites)].URL, i)
		}
		path := writeRegistry(t, urls, sites[0].URL)
		start := time.Now()
		code, out, errOut, rss := runCheck(t, bin, path, "--per-host", "4", "--concurrency", "32", "--delay", "0", "--timeout", "30s")
		took := time.Since(start)
		if code != 0 || !strings.Contains(out, fmt.Sprintf("%d sources checked: %d ok", n, n)) {
			t.Fatalf("exit %d\n%.500s\n%s", code, out, errOut)
		}
		t.Logf("%d sources: %s, peak RSS %d KiB", n, took.Round(time.Millisecond), rss)
		return took, rss
	}
	_, small := measure(500)
	_, large := measure(5000)
	if small > 0 && large > small+32<<10 {
		t.Errorf("peak RSS grew from %d KiB (500 sources) to %d KiB (5,000): more than 32 MiB", small, large)
	}
}

// serve --check-sources checks the sources in the background, keeps the
// outcome in the health file, and get_sources, /health and 3gs doctor
// say what it found.
func TestServeChecksSources(t *testing.T) {
	t.Parallel() // seconds of waiting on the background check, in its own directory and port
	bin := testkit.Binary(t)
	// Each source on a site of its own: serve checks as 3gs check does by
	// default, one request at a time per host a second apart, so six on
	// one host would wait five seconds for nothing this test is about.
	var urls []string
	var base0 string
	for _, p := range []string{"/ok", "/404", "/old", "/gone-a", "/gone-b", "/gone-c"} {
		s := linkchecktest.NewSite(t, 0)
		urls = append(urls, s.URL+p)
		base0 = cmp.Or(base0, s.URL)
	}
	path := writeRegistry(t, urls, base0)
	dir := filepath.Dir(path)
	p := testkit.Start(t, dir, "serve", bin, "serve", "--http", "127.0.0.1:0", "--registry", path, "--check-sources", "1s", "--log-level", "debug")
	base := "http://" + p.WaitLog(t, testkit.Serving, 0, 30*time.Second)[1]
	c := &http.Client{Timeout: 10 * time.Second}
	var hs struct {
		Sources *struct {
			Ok, Redirected, Changed, Gone, Error int
			CheckedAt                            string `json:"checked_at"`
		} `json:"sources"`
	}
	testkit.WaitFor(t, "/health to report the sources", 90*time.Second, func() bool {
		resp, err := c.Get(base + "/health")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(&hs) == nil && hs.Sources != nil
	})
	if got := *hs.Sources; got.Ok != 1 || got.Redirected != 1 || got.Gone != 4 || got.Error != 0 {
		t.Errorf("/health sources: %+v", got)
	}
	if doc, err := sourcehealth.Read(sourcehealth.PathFor(path)); err != nil || doc == nil || len(doc.Sources) != 6 {
		t.Errorf("health file: %v %+v", err, doc)
	}

	call := func(slug string) (gen.GetSourcesOutput, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		a := post(ctx, c, base+"/mcp", statelessCall(7, "get_sources", map[string]string{"slug": slug}), "")
		var msg struct {
			Result struct {
				Content           []struct{ Text string } `json:"content"`
				StructuredContent gen.GetSourcesOutput    `json:"structuredContent"`
			} `json:"result"`
		}
		if a.err != nil || json.Unmarshal(a.body, &msg) != nil || len(msg.Result.Content) == 0 {
			t.Fatalf("get_sources %s: %v %s", slug, a.err, a.body)
		}
		return msg.Result.StructuredContent, msg.Result.Content[0].Text
	}
	out, text := call("c0000")
	want := []gen.CheckStatus{"ok", "gone", "redirected"}
	for i, src := range out.Sources {
		if src.Health == nil || src.Health.Status != want[i] {
			t.Errorf("source %d: %+v, want %s", i+1, src.Health, want[i])
		}
	}
	if !strings.Contains(text, "   Health: last checked just now: gone") && !strings.Contains(text, "minute ago: gone") {
		t.Errorf("text:\n%s", text)
	}
	if _, text = call("c0001"); !strings.HasPrefix(text, "Warning: all 3 sources of this category were gone") {
		t.Errorf("all gone not said first:\n%s", text)
	}

	// The server is the health file's one writer: 3gs check still reports,
	// and leaves the file alone.
	code, _, errOut, _ := runCheck(t, bin, path, "--delay", "1ms", "--only", "c0000")
	if code != 1 || !strings.Contains(errOut, "not written") {
		t.Errorf("check beside the server: %d %q", code, errOut)
	}
	// 3gs doctor summarizes.
	cmd := exec.Command(bin, "doctor", "--registry", path)
	dout, _ := cmd.Output()
	if !strings.Contains(string(dout), "sources: 1 ok, 1 redirected, 4 gone (checked ") {
		t.Errorf("doctor:\n%s", dout)
	}
	if p.Exited() {
		t.Fatal("serve exited")
	}
}

// 3gs check --apply-redirects, as a process, leaves a registry that 3gs
// verify and 3gs audit verify accept, with the new URL in it.
func TestCheckApplyRedirectsVerifies(t *testing.T) {
	bin := testkit.Binary(t)
	s := linkchecktest.NewSite(t, 0)
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "curator.key")
	out, err := exec.Command(bin, "keygen", "--out", keyPath).Output()
	if err != nil {
		t.Fatal(err)
	}
	data := strings.Replace(string(linkchecktest.Registry([]string{s.URL + "/ok", s.URL + "/old", s.URL + "/temp"}, s.URL)), "pk:placeholder", strings.TrimSpace(string(out)), 1)
	path := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "sign", "--key-file", keyPath, path).CombinedOutput(); err != nil {
		t.Fatalf("sign: %v\n%s", err, out)
	}
	code, stdout, errOut, _ := runCheck(t, bin, path, "--apply-redirects", "--key-file", keyPath, "--delay", "1ms")
	if code != 0 || !strings.Contains(stdout, "Applied: categories.c0000: "+s.URL+"/old → "+s.URL+"/new") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	for _, args := range [][]string{{"verify", path}, {"audit", "verify", path}} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), s.URL+"/new") || strings.Contains(string(b), s.URL+"/old") {
		t.Errorf("registry:\n%s", b)
	}
}
