package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/linkcheck"
	"github.com/three-good-sources/3gs/internal/linkcheck/linkchecktest"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
)

// checkSite is a loopback site and a registry file whose sources are its
// pages: c0000 (/ok /404 /410), c0001 (/old /temp /500), c0002 (/stall
// /nohead /temp307), c0003 (/many/9 /old308 /many/11).
func checkSite(t *testing.T) (*linkchecktest.Site, string) {
	t.Helper()
	s := linkchecktest.NewSite(t, 0)
	var urls []string
	for _, p := range []string{"/ok", "/404", "/410", "/old", "/temp", "/500", "/stall", "/nohead", "/temp307", "/many/9", "/old308", "/many/11"} {
		urls = append(urls, s.URL+p)
	}
	path := filepath.Join(t.TempDir(), "registry.json")
	if err := os.WriteFile(path, linkchecktest.Registry(urls, s.URL), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	return s, path
}

var fastCheck = []string{"--delay", "1ms", "--timeout", "2s", "--per-host", "4"}

func TestCheckTable(t *testing.T) {
	t.Parallel() // two seconds of waiting on the stalled page (checkSite)
	s, path := checkSite(t)
	code, out, errOut := run(t, nil, append([]string{"check", path}, fastCheck...)...)
	if code != ExitFail {
		t.Fatalf("exit %d, want 1 (sources gone and failing)\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		path + ": 12 sources checked: 6 ok, 2 redirected, 2 gone, 2 error\n",
		"\nc0000 (Topic 0)\n  1  ok          " + s.URL + "/ok\n  2  gone        " + s.URL + "/404 (http 404)\n  3  gone        " + s.URL + "/410 (http 410)\n",
		"  1  redirected  " + s.URL + "/old → " + s.URL + "/new\n  2  ok          " + s.URL + "/temp\n  3  error       " + s.URL + "/500 (http 500)\n",
		"  1  error       " + s.URL + "/stall (timeout)\n",
		"Permanent redirects: change these URLs in " + path,
		"  categories.c0001.sources[0].url: \"" + s.URL + "/old\" → \"" + s.URL + "/new\"\n",
		"  categories.c0003.sources[1].url: \"" + s.URL + "/old308\" → \"" + s.URL + "/new\"\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Piped, stderr carries no progress line.
	if strings.Contains(errOut, "checked ") {
		t.Errorf("progress line on a pipe: %q", errOut)
	}
}

func TestCheckJSONOnlyAndFlags(t *testing.T) {
	s, path := checkSite(t)
	env := map[string]string{"REGISTRY_PATH": path, "THREEGS_CHECK_DELAY": "1ms", "THREEGS_CHECK_TIMEOUT": "2s", "THREEGS_CHECK_JSON": "true", "THREEGS_CHECK_ONLY": "c0003"}
	code, out, errOut := run(t, env, "check")
	if code != ExitOK {
		t.Fatalf("exit %d (only c0003, with nothing gone)\n%s\n%s", code, out, errOut)
	}
	doc, err := gen.DecodeSourcehealth([]byte(out))
	if err != nil {
		t.Fatalf("not a sourcehealth document: %v\n%s", err, out)
	}
	if len(doc.Sources) != 3 || doc.Summary.Ok != 2 || doc.Summary.Redirected != 1 || doc.RegistryVersion != "1.0.0" || doc.Curator == nil || *doc.Curator != "Ada Checker" {
		t.Fatalf("%+v", doc)
	}
	r := doc.Sources[1]
	if r.Status != gen.CheckStatusRedirected || r.Location == nil || *r.Location != s.URL+"/new" || r.HttpStatus == nil || *r.HttpStatus != 308 {
		t.Errorf("%+v", r)
	}
	if doc.CheckedAt.IsZero() {
		t.Error("the health file says no time of check")
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--only", "nope"}, `has no category "nope"`},
		{[]string{"--per-host", "0"}, "--per-host (THREEGS_CHECK_PER_HOST) must be a whole number of at least 1"},
		{[]string{"--delay", "-1s"}, "--delay (THREEGS_CHECK_DELAY) must be a duration"},
		{[]string{"--timeout", "soon"}, "--timeout (THREEGS_CHECK_TIMEOUT) must be a positive duration"},
		{[]string{"--concurrency", "x"}, "--concurrency (THREEGS_CHECK_CONCURRENCY)"},
		{[]string{path, "again"}, "one registry file at a time"},
	} {
		code, _, errOut := run(t, nil, append([]string{"check", path}, c.args...)...)
		if c.args[0] == path {
			code, _, errOut = run(t, nil, append([]string{"check"}, c.args...)...)
		}
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	if code, _, errOut := run(t, nil, "check", filepath.Join(t.TempDir(), "missing.json")); code != ExitFail || !strings.Contains(errOut, "does not exist") {
		t.Errorf("missing file: %d %q", code, errOut)
	}
}

func TestUserAgentNamesCurator(t *testing.T) {
	ua := userAgent("Ada (evil)\r\nX-Injected: 1")
	if !strings.HasPrefix(ua, "3gs/") || !strings.Contains(ua, "registry of Ada evilX-Injected: 1") || strings.ContainsAny(ua, "\r\n") {
		t.Errorf("%q", ua)
	}
}

// On a terminal the progress line is drawn over itself; off one, never.
func TestCheckProgressLine(t *testing.T) {
	var b strings.Builder
	p := &progress{w: &b, on: true}
	p.update(2, 5, map[linkcheck.Status]int{linkcheck.OK: 1, linkcheck.Gone: 1})
	p.end()
	if got := b.String(); !strings.Contains(got, "\r\x1b[Kchecked 2/5, 1 gone") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("%q", got)
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) || isTerminal(&b) {
		t.Error("/dev/null or a buffer taken for a terminal")
	}
}

// check keeps its outcome in REGISTRY.health.json; the next check finds a
// page turned into a parked domain changed; --only merges into the file.
func TestCheckHealthFileAndChanged(t *testing.T) {
	t.Parallel() // two seconds of waiting on the stalled page (checkSite)
	s, path := checkSite(t)
	if code, out, errOut := run(t, nil, append([]string{"check", path}, fastCheck...)...); code != ExitFail {
		t.Fatalf("%d\n%s\n%s", code, out, errOut)
	}
	doc, err := sourcehealth.Read(sourcehealth.PathFor(path))
	if err != nil || doc == nil || len(doc.Sources) != 12 || doc.Summary.Gone != 2 {
		t.Fatalf("%v %+v", err, doc)
	}
	s.Park("/many/9")
	code, out, errOut := run(t, nil, append([]string{"check", path, "--only", "c0003"}, fastCheck...)...)
	if code != ExitOK || !strings.Contains(out, "  1  changed     "+s.URL+"/many/9 (title changed)") {
		t.Fatalf("%d\n%s\n%s", code, out, errOut)
	}
	doc, err = sourcehealth.Read(sourcehealth.PathFor(path))
	if err != nil || len(doc.Sources) != 12 || doc.Summary.Changed != 1 || doc.Summary.Gone != 2 || doc.Sources[9].Status != gen.CheckStatusChanged {
		t.Fatalf("after --only: %v %+v", err, doc.Summary)
	}
	// Another writer (a server checking in the background) holds the file:
	// the check still reports, and leaves the file to it.
	lock, err := sourcehealth.Lock(sourcehealth.PathFor(path))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	code, _, errOut = run(t, nil, append([]string{"check", path, "--only", "c0000"}, fastCheck...)...)
	if code != ExitFail || !strings.Contains(errOut, "not written") {
		t.Errorf("%d %q", code, errOut)
	}
}

// signedCheckSite is checkSite's registry naming a fresh curator key,
// signed by 3gs sign (so its audit log starts), and the key file.
func signedCheckSite(t *testing.T, paths ...string) (*linkchecktest.Site, string, string) {
	t.Helper()
	s := linkchecktest.NewSite(t, 0)
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "curator.key")
	code, out, errOut := run(t, nil, "keygen", "--out", keyPath)
	if code != ExitOK {
		t.Fatalf("keygen: %d %s", code, errOut)
	}
	pub := strings.TrimSpace(out)
	var urls []string
	for _, p := range paths {
		urls = append(urls, s.URL+p)
	}
	data := strings.Replace(string(linkchecktest.Registry(urls, s.URL)), "pk:placeholder", pub, 1)
	path := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, path); code != ExitOK {
		t.Fatalf("sign: %s", errOut)
	}
	return s, path, keyPath
}

// --apply-redirects writes the permanent redirects through the curator
// tools' change path: an audit entry per category, a new version, the
// signature; 3gs verify and 3gs audit verify accept the result.
func TestCheckApplyRedirects(t *testing.T) {
	s, path, keyPath := signedCheckSite(t, "/old", "/ok", "/temp", "/404", "/old308", "/elsewhere")
	before, err := registry.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Without the key, a signed registry is left alone.
	code, out, errOut := run(t, nil, append([]string{"check", path, "--apply-redirects"}, fastCheck...)...)
	if code != ExitFail || !strings.Contains(errOut, "give the curator key with --key-file") {
		t.Fatalf("no key: %d\n%s\n%s", code, out, errOut)
	}
	if after, _ := registry.LoadFile(path); after.SHA256() != before.SHA256() {
		t.Fatal("changed without the key")
	}

	code, out, errOut = run(t, nil, append([]string{"check", path, "--apply-redirects", "--key-file", keyPath}, fastCheck...)...)
	if code != ExitFail { // /404 is gone
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"Applied: categories.c0000: " + s.URL + "/old → " + s.URL + "/new\n",
		"Applied: categories.c0001: " + s.URL + "/old308 → " + s.URL + "/new\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+errOut, "169.254.169.254") {
		t.Errorf("the move to a link-local address is offered as an edit:\n%s\n%s", out, errOut)
	}
	after, err := registry.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c0, _ := after.Category("c0000")
	c1, _ := after.Category("c0001")
	if c0.Sources[0].URL != s.URL+"/new" || c1.Sources[1].URL != s.URL+"/new" || c1.Sources[2].URL != s.URL+"/elsewhere" {
		t.Errorf("URLs: %s %s %s", c0.Sources[0].URL, c1.Sources[1].URL, c1.Sources[2].URL)
	}
	if registry.CompareVersions(after.Version(), before.Version()) <= 0 {
		t.Errorf("version %s → %s", before.Version(), after.Version())
	}
	if code, out, errOut := run(t, nil, "verify", path); code != ExitOK {
		t.Errorf("verify: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := run(t, nil, "audit", "verify", path); code != ExitOK {
		t.Errorf("audit verify: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := run(t, nil, "audit", "log", "--action", "upsert", path); code != ExitOK || strings.Count(out, "\n") != 2 {
		t.Errorf("audit log: one upsert entry per category wanted:\n%s", out)
	}
	// The health file names the new URLs, ok; the move to a link-local
	// address is the error it is.
	doc, err := sourcehealth.Read(sourcehealth.PathFor(path))
	if err != nil || doc.Summary.Redirected != 0 || doc.Sources[0].URL != s.URL+"/new" || doc.Sources[0].Status != gen.CheckStatusOk ||
		doc.Sources[5].Status != gen.CheckStatusError || doc.Sources[5].Reason == nil || *doc.Sources[5].Reason != linkcheck.RedirectRefused {
		t.Errorf("health file: %v %+v", err, doc)
	}
	// Again: nothing left to apply.
	code, out, _ = run(t, nil, append([]string{"check", path, "--apply-redirects", "--key-file", keyPath, "--only", "c0000"}, fastCheck...)...)
	if code != ExitOK || !strings.Contains(out, "No permanent redirect to apply.") {
		t.Errorf("second run: %d\n%s", code, out)
	}
	// The embedded registry cannot be changed.
	if code, _, errOut := run(t, nil, "check", "--apply-redirects"); code != ExitUsage || !strings.Contains(errOut, "name it") {
		t.Errorf("embedded: %d %q", code, errOut)
	}
}

// --report turns the last check into the curator's to-do list, most
// urgent first, without asking any source again.
func TestCheckReport(t *testing.T) {
	t.Parallel() // two seconds of waiting on the stalled page (checkSite)
	s, path := checkSite(t)
	if code, _, errOut := run(t, nil, "check", "--report", path); code != ExitFail || !strings.Contains(errOut, "Run 3gs check "+path+" first") {
		t.Fatalf("before any check: %d %q", code, errOut)
	}
	run(t, nil, append([]string{"check", path}, fastCheck...)...)
	asked := len(s.Methods("/404"))
	code, out, errOut := run(t, nil, "check", "--report", path)
	if code != ExitFail {
		t.Fatalf("%d\n%s\n%s", code, out, errOut)
	}
	gone := strings.Index(out, "1. Replace the gone sources (2)")
	redirects := strings.Index(out, "2. Apply the permanent redirects (2): 3gs check --apply-redirects --key-file KEY "+path)
	failing := strings.Index(out, "3. Look again at the failing sources (2)")
	if gone < 0 || redirects < gone || failing < redirects || !strings.Contains(out, "   c0000 #2  "+s.URL+"/404 (http 404)\n") ||
		!strings.Contains(out, "   c0001 #1  "+s.URL+"/old → "+s.URL+"/new\n") || !strings.Contains(out, "3gs misses") {
		t.Errorf("report:\n%s", out)
	}
	if len(s.Methods("/404")) != asked {
		t.Error("--report asked a source again")
	}

	// A pending report of a dead source (propose_change) is on the list
	// too, after the check's own findings.
	ps, _, err := proposals.Open(proposals.PathFor(path), proposals.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ps.Add(gen.ProposalRecord{Action: gen.ProposalActionReportDeadSource, Slug: "c0001", Rank: ptr(3), Reason: "It answers 500 for weeks."})
	ps.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, out, _ = run(t, nil, "check", "--report", path)
	if i := strings.Index(out, "Decide the proposals about sources (1)"); i < failing || !strings.Contains(out, p.ID+"  c0001 #3  report_dead_source (proposer's words: It answers 500 for weeks.)") {
		t.Errorf("the reported dead source is not listed after the check's findings:\n%s", out)
	}
}

// With the curator's key, 3gs check signs the health file it writes (a
// signature endorsing servers check before showing it); with another
// key it writes the file unsigned and says why.
func TestCheckSignsTheHealthFile(t *testing.T) {
	_, path, keyPath := signedCheckSite(t, "/ok", "/404", "/ok?b")
	health := sourcehealth.PathFor(path)
	run(t, nil, append([]string{"check", path, "--key-file", keyPath}, fastCheck...)...)
	data, err := os.ReadFile(health)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := os.ReadFile(health + sourcehealth.SigSuffix)
	if err != nil {
		t.Fatalf("no signature beside the health file: %v", err)
	}
	reg, err := registry.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	curatorKey, _ := reg.CuratorKey()
	if _, err := signature.VerifyHealth(data, sig, curatorKey); err != nil {
		t.Errorf("the health file's signature: %v", err)
	}

	other := filepath.Join(t.TempDir(), "other.key")
	if code, _, errOut := run(t, nil, "keygen", "--out", other); code != ExitOK {
		t.Fatalf("keygen: %s", errOut)
	}
	_, _, errOut := run(t, nil, append([]string{"check", path, "--key-file", other}, fastCheck...)...)
	if !strings.Contains(errOut, "health file is written unsigned") {
		t.Errorf("another key: %s", errOut)
	}
	if _, err := os.Stat(health + sourcehealth.SigSuffix); !os.IsNotExist(err) {
		t.Errorf("a signature that no longer matches was left: %v", err)
	}
}
