package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/linkcheck/linkchecktest"
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
	bin := buildBinary(t)
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
	if testing.Short() {
		t.Skip("checks 5,000 sources")
	}
	bin := buildBinary(t)
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
