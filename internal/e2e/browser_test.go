package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// browser is headless Chromium, kept to loopback: every host name but
// 127.0.0.1 fails to resolve and its background services are off, so
// loading a page reaches nothing but the server under test.
type browser struct {
	t       *testing.T
	bin     string
	profile string
}

// flags are Chromium's flags for every run.
func (b *browser) flags() []string {
	return []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir=" + b.profile,
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-domain-reliability", "--no-pings",
		"--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication",
		"--enable-logging=stderr", "--v=0",
	}
}

// run runs Chromium on url with args and returns its stdout and stderr.
func (b *browser) run(url string, args ...string) (stdout, stderr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.bin, append(append(b.flags(), args...), url)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.t.Fatalf("chromium %s: %v\n%s", url, err, errb.String())
	}
	return out.String(), errb.String()
}

// consoleMessage is how Chromium's log reports a page's console output
// (errors, Content-Security-Policy refusals among them).
var consoleMessage = regexp.MustCompile(`(?m)^.*(CONSOLE|Refused to|Uncaught).*$`)

// dom loads url and returns the DOM as rendered, failing on any console
// message the page caused.
func (b *browser) dom(url string) string {
	b.t.Helper()
	dom, logs := b.run(url, "--dump-dom", "--window-size=1280,900")
	if m := consoleMessage.FindAllString(logs, -1); len(m) > 0 {
		b.t.Errorf("%s: the browser's console reported:\n%s", url, strings.Join(m, "\n"))
	}
	return dom
}

// screenshot saves url as rendered at width × height in path.
func (b *browser) screenshot(url, path string, width, height int) {
	b.t.Helper()
	b.run(url, "--screenshot="+path, "--window-size="+strconv.Itoa(width)+","+strconv.Itoa(height), "--hide-scrollbars")
	fi, err := os.Stat(path)
	if err != nil || fi.Size() == 0 {
		b.t.Fatalf("no screenshot of %s at %d px in %s: %v", url, width, path, err)
	}
	b.t.Logf("screenshot of %s at %d×%d: %s (%d bytes)", url, width, height, path, fi.Size())
}

// artifacts is where the screenshots go: $THREEGS_E2E_ARTIFACTS when set
// (CI keeps that directory), else a directory under the system's
// temporary one that outlives the test, so a person can look.
func artifacts(t *testing.T) string {
	dir := os.Getenv("THREEGS_E2E_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "3gs-e2e-artifacts")
	}
	dir = filepath.Join(dir, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBrowserPages starts 3gs serve --http on a frozen registry and reads
// its pages in headless Chromium (Debian's chromium package): the home
// page, a search, a category and the provenance page the header links,
// each with the text it must show and no console message (a refused
// style or a script error would be one); then screenshots at desktop
// width and at 375 px, a phone's.
func TestBrowserPages(t *testing.T) {
	testkit.Long(t, "it starts headless Chromium once a page")
	t.Parallel() // half a minute of Chromium on its own server and profiles
	chromium := testkit.NeedDebianPackage(t, "chromium")
	bin := testkit.Binary(t)
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(reg, frozen.Registry(frozen.Basic), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reg+".sig", signature.Sign(frozen.Registry(frozen.Basic), frozen.TestKey(), time.Now()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := testkit.Serve(t, bin, "--registry", reg)
	base := nodeURL(s.URL)
	b := &browser{t: t, bin: chromium, profile: filepath.Join(dir, "profile")}

	home := b.dom(base + "/")
	for _, want := range []string{"Three good sources", "9 categories", "Learning Rust", "verified", base + "/mcp", `href="/c/rust-learning"`, `href="/provenance"`} {
		if !strings.Contains(home, want) {
			t.Errorf("/ as rendered lacks %q", want)
		}
	}
	// The search form's GET, as submitting it makes.
	search := b.dom(base + "/?q=learn+rust+ownership")
	for _, want := range []string{"Search: “learn rust ownership”", "The Rust Programming Language", `href="https://doc.rust-lang.org/book/"`} {
		if !strings.Contains(search, want) {
			t.Errorf("the search as rendered lacks %q", want)
		}
	}
	cat := b.dom(base + "/c/rust-learning")
	for _, want := range []string{"<h1>Learning Rust</h1>", "Rustlings", "Health: unknown", "Propose a change", `href="/provenance"`} {
		if !strings.Contains(cat, want) {
			t.Errorf("/c/rust-learning as rendered lacks %q", want)
		}
	}
	prov := b.dom(base + "/provenance")
	for _, want := range []string{"<h1>Provenance</h1>", "pk:8j33hcqfktweq6kw58y6xkbrufpg6xo5h6oafewg15qqscjag6my", "verified", "Check it by hand", "Audit log"} {
		if !strings.Contains(prov, want) {
			t.Errorf("/provenance as rendered lacks %q", want)
		}
	}

	// The static export of the same registry, read from files.
	site := filepath.Join(dir, "site")
	if out, err := exec.Command(bin, "export", "--format", "html", "--out", site, "--registry", reg).CombinedOutput(); err != nil {
		t.Fatalf("3gs export: %v\n%s", err, out)
	}
	static := b.dom("file://" + filepath.Join(site, "c", "rust-learning.html"))
	for _, want := range []string{"<h1>Learning Rust</h1>", `href="../static/style.css"`, `href="../provenance.html"`, `href="https://doc.rust-lang.org/book/"`} {
		if !strings.Contains(static, want) {
			t.Errorf("the exported c/rust-learning.html as rendered lacks %q", want)
		}
	}

	out := artifacts(t)
	b.screenshot("file://"+filepath.Join(site, "index.html"), filepath.Join(out, "export-index-375.png"), 375, 800)
	for _, shot := range []struct {
		path, name string
	}{{"/", "home"}, {"/?q=learn+rust", "search"}, {"/c/rust-learning", "category"}, {"/provenance", "provenance"}} {
		b.screenshot(base+shot.path, filepath.Join(out, shot.name+"-desktop.png"), 1280, 900)
		b.screenshot(base+shot.path, filepath.Join(out, shot.name+"-375.png"), 375, 800)
	}

	// Under the DevTools protocol: at 375 px no page is wider than the
	// screen, and axe-core finds no serious or critical violation, in
	// the light scheme and in the dark.
	paths := []string{"/", "/?q=learn+rust", "/?q=zzzz+qqqq", "/c/rust-learning", "/c/nope", "/provenance", "/network", "/proposals"}
	t.Run("phone", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		c := (&browser{t: t, bin: chromium, profile: filepath.Join(dir, "profile-phone")}).startCDP(ctx)
		phone := c.page(375, 800, true)
		for _, p := range paths {
			c.navigate(phone, base+p)
			var width int
			c.evaluate(phone, "document.documentElement.scrollWidth", &width)
			if width > 375 {
				t.Errorf("%s at 375 px is %d px wide: it scrolls sideways", p, width)
			}
		}
	})
	t.Run("axe", func(t *testing.T) {
		testkit.NeedNodePackage(t, "testdata", "axe-core", "npm ci --prefix internal/e2e/testdata")
		axe, err := os.ReadFile(filepath.Join("testdata", "node_modules", "axe-core", "axe.min.js"))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		c := (&browser{t: t, bin: chromium, profile: filepath.Join(dir, "profile-axe")}).startCDP(ctx)
		s := c.page(1280, 900, false)
		c.call(s, "Page.setBypassCSP", map[string]any{"enabled": true}, nil) // to load axe itself
		for _, scheme := range []string{"light", "dark"} {
			c.call(s, "Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": scheme}}}, nil)
			for _, p := range paths {
				c.navigate(s, base+p)
				var loaded bool
				c.evaluate(s, string(axe)+";typeof axe === 'object'", &loaded)
				var violations []struct {
					ID, Impact, Help string
					Nodes            int
				}
				c.evaluate(s, `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations.map(v => ({id: v.id, impact: v.impact || "", help: v.help, nodes: v.nodes.length})))`, &violations)
				for _, v := range violations {
					if v.Impact == "serious" || v.Impact == "critical" {
						t.Errorf("%s (%s): axe-core %s violation %s on %d elements: %s", p, scheme, v.Impact, v.ID, v.Nodes, v.Help)
					} else {
						t.Logf("%s (%s): axe-core %s finding %s on %d elements: %s", p, scheme, v.Impact, v.ID, v.Nodes, v.Help)
					}
				}
			}
		}
	})
}
