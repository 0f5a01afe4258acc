package e2e

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// The deploy recipes of docs/operating.md, run as written: "Install it"
// (systemd and nginx) in a temporary root without privileges, and "Run it
// in a container" with the binary in place of the image where no Docker
// daemon can build it.

// recipeHost is the host name the service recipe is run with, in place of
// the example's, so that the test sees it reach every installed file.
const recipeHost = "node.recipe.test"

// docShellBlocks returns the ```sh blocks of docs/operating.md from the
// heading line given to the next heading of any level.
func docShellBlocks(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testkit.Root(), "docs", "operating.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	in, block := false, (*strings.Builder)(nil)
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case block != nil && line == "```":
			blocks = append(blocks, block.String())
			block = nil
		case block != nil:
			block.WriteString(line + "\n")
		case line == heading:
			in = true
		case in && strings.HasPrefix(line, "#"):
			in = false
		case in && line == "```sh":
			block = new(strings.Builder)
		}
	}
	if len(blocks) == 0 {
		t.Fatalf("docs/operating.md has no sh block under %q", heading)
	}
	return blocks
}

// recipePrelude runs before the recipe's own lines. sudo runs the
// command as the test's user (every path the recipe writes is under
// $ROOT); the commands that need a machine of their own only say why they
// are skipped, and certbot keeps its arguments for the test to check; go
// build runs in this repository, the clone the recipe is about, writing
// where the recipe says.
const recipePrelude = `set -euo pipefail
PS4='+ recipe: '
set -x
sudo() { "$@"; }
systemctl() { echo "skipped: systemctl $* (no systemd runs here; the test starts the installed unit's ExecStart itself)" >&2; }
certbot() { printf '%s\n' "$@" > "$RECIPE_LOG/certbot.args"; echo "skipped: certbot $* (no public name to certify; the test checks that nginx serves the webroot it was given)" >&2; }
curl() { echo "skipped: curl $* (the unit is not running; the test asks /health of its ExecStart)" >&2; }
nginx() { echo "skipped: nginx $* (the test runs nginx -t, and nginx, on the installed sites moved into the temporary root)" >&2; }
go() {
	if [ "$#" -eq 4 ] && [ "$1" = build ] && [ "$2" = -o ] && [ "$4" = ./cmd/3gs ]; then
		command go build -C "$RECIPE_REPO" -o "$PWD/$3" ./cmd/3gs
	else
		echo "the test runs only 'go build -o NAME ./cmd/3gs', not: go $*" >&2
		return 1
	fi
}
`

// TestServiceRecipe runs the three blocks of "Install it" in
// docs/operating.md as they are written, from a folder holding the
// clone's deploy/, with ROOT and HOME in a temporary directory, then
// starts what they installed as systemd would (the unit's ExecStart with
// its environment and credentials) on a loopback port, and checks it:
// /health, an edit signed with the key the unit hands over, systemd-analyze
// verify on the installed unit, and nginx with the installed sites in
// front of it, answering the ACME challenge from the webroot certbot was
// given, redirecting plain HTTP and proxying HTTPS.
func TestServiceRecipe(t *testing.T) {
	testkit.Long(t, "it builds 3gs as the recipe does and runs the whole install")
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed; the recipe is written for it")
	}
	bin := testkit.Binary(t)
	tmp := t.TempDir()
	root, home, clone, logDir := filepath.Join(tmp, "root"), filepath.Join(tmp, "home"), filepath.Join(tmp, "clone"), filepath.Join(tmp, "log")
	for _, d := range []string{root, home, logDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testkit.CopyTree(t, filepath.Join(testkit.Root(), "deploy"), filepath.Join(clone, "deploy"))

	blocks := docShellBlocks(t, "### Install it")
	if len(blocks) != 3 {
		t.Fatalf("\"Install it\" has %d sh blocks, want 3 (make the node, install, start)", len(blocks))
	}
	script := strings.Join(blocks, "\n")
	hostLine := regexp.MustCompile(`(?m)^HOST=\S+$`)
	if n := len(hostLine.FindAllString(script, -1)); n != 1 {
		t.Fatalf("the recipe sets HOST= %d times, want once:\n%s", n, script)
	}
	script = hostLine.ReplaceAllString(script, "HOST="+recipeHost)

	goEnv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	ge := strings.Split(strings.TrimSpace(string(goEnv)), "\n")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ROOT=" + root, "RECIPE_LOG=" + logDir, "RECIPE_REPO=" + testkit.Root(),
		"GOCACHE=" + ge[0], "GOMODCACHE=" + ge[1], "GOPATH=" + ge[2], "GOFLAGS=" + os.Getenv("GOFLAGS"), "GOTOOLCHAIN=local", "LANG=C.UTF-8"}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", recipePrelude+script)
	cmd.Dir, cmd.Env = clone, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the recipe failed: %v\n%s", err, out)
	}
	t.Logf("the recipe ran; skipped:\n%s", strings.Join(regexp.MustCompile(`(?m)^skipped: .*$`).FindAllString(string(out), -1), "\n"))

	// doctor, run by the recipe with the unit's files, found nothing
	// wrong, and the key there to sign again.
	for _, want := range []string{"OK    key: ", "OK    tokens: ", "OK    expiry: the signature is valid until "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor in the recipe did not say %q:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`(?m)^(FAIL|WARN) `).Match(out) {
		t.Errorf("doctor in the recipe warned or failed:\n%s", out)
	}
	token := regexp.MustCompile(`3gs_[A-Za-z0-9_-]{20,}`).FindString(string(out))
	if token == "" {
		t.Fatalf("token new printed no token:\n%s", out)
	}

	// What was installed, and with which modes.
	for path, mode := range map[string]fs.FileMode{
		"usr/local/bin/3gs": 0o755, "etc/3gs": 0o700 | fs.ModeDir, "etc/3gs/curator.key": 0o600, "etc/3gs/tokens.json": 0o600,
		"var/lib/3gs": 0o700 | fs.ModeDir, "var/lib/3gs/registry.json": 0o600, "var/lib/3gs/registry.json.sig": 0o600,
		"var/lib/3gs/registry.json.audit.jsonl": 0o600,
	} {
		fi, err := os.Stat(filepath.Join(root, path))
		if err != nil || fi.Mode()&(fs.ModePerm|fs.ModeDir) != mode {
			t.Errorf("/%s: %v, mode %v, want %v", path, err, fi.Mode(), mode)
		}
	}
	installed := map[string]string{}
	for _, path := range []string{"etc/systemd/system/3gs.service", "etc/nginx/sites-enabled/3gs-http", "etc/nginx/sites-enabled/3gs"} {
		data, err := os.ReadFile(filepath.Join(root, path)) // through the links in sites-enabled
		if err != nil {
			t.Fatalf("/%s: %v", path, err)
		}
		if !strings.Contains(string(data), recipeHost) || strings.Contains(string(data), publicName) {
			t.Errorf("/%s does not name %s in place of %s", path, recipeHost, publicName)
		}
		installed[path] = string(data)
	}

	// The unit as systemd would start it: ExecStart with its Environment=,
	// %S the state directory's parent, %d the credentials, copied from
	// /etc/3gs as LoadCredential= says; on a loopback port.
	unit := installed["etc/systemd/system/3gs.service"]
	creds := filepath.Join(tmp, "credentials")
	if err := os.Mkdir(creds, 0o700); err != nil {
		t.Fatal(err)
	}
	specifiers := strings.NewReplacer("%S", filepath.Join(root, "var", "lib"), "%d", creds)
	var words, environ []string
	for _, s := range parseUnit(t, unit) {
		switch s[0] {
		case "Service.ExecStart":
			words = strings.Fields(s[1])
		case "Service.Environment":
			environ = append(environ, specifiers.Replace(s[1]))
		case "Service.LoadCredential":
			name, src, _ := strings.Cut(s[1], ":")
			data, err := os.ReadFile(filepath.Join(root, src))
			if err != nil {
				t.Fatalf("LoadCredential=%s: %v", s[1], err)
			}
			if err := os.WriteFile(filepath.Join(creds, name), data, 0o400); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(words) < 2 || words[0] != "/usr/local/bin/3gs" {
		t.Fatalf("the installed unit runs %v", words)
	}
	args := slices.Clone(words[1:])
	for i := range args {
		if args[i] == "--http" {
			args[i+1] = "127.0.0.1:0"
		}
	}
	envBin, err := exec.LookPath("env")
	if err != nil {
		t.Skip("env is not installed")
	}
	server := testkit.Start(t, tmp, "3gs", envBin, append(append(append([]string{"HOME=" + home}, environ...), filepath.Join(root, words[0])), args...)...)
	// THREEGS_LOG_FORMAT=json, as the unit sets it.
	servingJSON := regexp.MustCompile(`"msg":"serving MCP over HTTP","url":"http://([^"/]+)/mcp"`)
	backend := server.WaitLog(t, servingJSON, 0, 30*time.Second)[1]
	base := "http://" + backend
	type recipeHealth struct {
		Status   string `json:"status"`
		Registry struct {
			Version  string `json:"version"`
			Signed   bool   `json:"signed"`
			Verified bool   `json:"verified"`
		} `json:"registry"`
	}
	var h recipeHealth
	testkit.WaitFor(t, "/health of the installed unit's command", 20*time.Second, func() bool {
		status, _, err := getJSON(http.DefaultClient, base+"/health", &h)
		return err == nil && status == http.StatusOK && h.Status == "ok"
	})
	if !h.Registry.Signed || !h.Registry.Verified || h.Registry.Version != "0.1.0" {
		t.Errorf("/health: %+v, want the node's registry 0.1.0, signed and verified", h)
	}
	// An edit with the admin token the recipe made: the server holds the
	// tokens and the key, so it writes, signs and serves the new version.
	var doc struct {
		Categories map[string]json.RawMessage `json:"categories"`
	}
	data, _ := os.ReadFile(filepath.Join(root, "var/lib/3gs/registry.json"))
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Categories) == 0 {
		t.Fatalf("the installed registry: %v", err)
	}
	var slug string
	for slug = range doc.Categories {
		break
	}
	var category map[string]any
	json.Unmarshal(doc.Categories[slug], &category)
	category["name"] = "Edited on the installed node"
	status, answer := testkit.PostMCP(t, base+"/mcp", "tools/call", map[string]any{"name": "upsert_category", "arguments": map[string]any{"slug": slug, "category": category}}, "Authorization", "Bearer "+token)
	if status != http.StatusOK || !strings.Contains(string(answer), `"registry_version":"0.1.1"`) {
		t.Errorf("upsert_category with the recipe's admin token: HTTP %d %s", status, answer)
	}
	if _, _, err := getJSON(http.DefaultClient, base+"/health", &h); err != nil || !h.Registry.Verified || h.Registry.Version != "0.1.1" {
		t.Errorf("/health after the edit: %v %+v, want 0.1.1 signed by the node", err, h)
	}
	if out, err := exec.Command(bin, "verify", filepath.Join(root, "var/lib/3gs/registry.json")).CombinedOutput(); err != nil {
		t.Errorf("3gs verify on the installed registry after the edit: %v\n%s", err, out)
	}

	// The webroot certbot was given is the one nginx serves the
	// challenges from.
	certbot, err := os.ReadFile(filepath.Join(logDir, "certbot.args"))
	if err != nil {
		t.Fatalf("the recipe did not run certbot: %v", err)
	}
	cb := strings.Split(strings.TrimSpace(string(certbot)), "\n")
	webroot := ""
	if i := slices.Index(cb, "-w"); i >= 0 && i+1 < len(cb) {
		webroot = cb[i+1]
	}
	if cb[0] != "certonly" || !slices.Contains(cb, "--webroot") || webroot == "" || !slices.Contains(cb, recipeHost) {
		t.Errorf("certbot %v: want certonly --webroot -w WEBROOT -d %s", cb, recipeHost)
	}
	siteRoot := regexp.MustCompile(`(?m)^\s*root (\S+);`).FindStringSubmatch(installed["etc/nginx/sites-enabled/3gs-http"])
	if siteRoot == nil || filepath.Join(root, siteRoot[1]) != webroot {
		t.Errorf("nginx serves the ACME challenges from %v (under ROOT), certbot writes them under %s", siteRoot, webroot)
	}
	if fi, err := os.Stat(webroot); err != nil || !fi.IsDir() {
		t.Errorf("the webroot %s was not made: %v", webroot, err)
	}

	// systemd reads the installed unit without a complaint.
	if analyze, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Log("systemd-analyze is not installed (it comes with systemd): the installed unit is not verified")
	} else {
		path := filepath.Join(tmp, "3gs.service")
		os.WriteFile(path, []byte(strings.Replace(unit, "\nExecStart=/usr/local/bin/3gs ", "\nExecStart="+filepath.Join(root, "usr/local/bin/3gs")+" ", 1)), 0o644)
		if out, err := exec.Command(analyze, "verify", path).CombinedOutput(); err != nil || strings.Contains(string(out), "3gs.service") {
			t.Errorf("systemd-analyze verify on the installed unit: %v\n%s", err, out)
		}
	}

	// nginx with the installed sites, their ports, certificate and webroot
	// moved into the temporary root.
	nginxBin := testkit.NeedDebianPackage(t, "nginx")
	dir := filepath.Join(tmp, "nginx")
	os.Mkdir(dir, 0o700)
	ca := writeTestCertificates(t, dir, recipeHost)
	httpsAddr, httpAddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	site := rewriteSite(t, installed["etc/nginx/sites-enabled/3gs-http"]+"\n"+installed["etc/nginx/sites-enabled/3gs"], recipeHost, siteRoot[1], dir, backend, httpsAddr, httpAddr)
	// The challenges go to the webroot the recipe made, under ROOT.
	site = strings.Replace(site, "root "+filepath.Join(dir, "webroot")+";", "root "+webroot+";", 1)
	sitePath := filepath.Join(dir, "sites.conf")
	os.WriteFile(sitePath, []byte(site), 0o644)
	conf := nginxMain(t, dir, sitePath)
	if os.Geteuid() == 0 {
		// nobody, nginx's workers, reads the webroot.
		for d := webroot; d != tmp; d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
		os.Chmod(tmp, 0o711)
		os.Chmod(filepath.Dir(tmp), 0o711)
	}
	proxy := startNginx(t, nginxBin, dir, conf)
	client := pinnedClient(ca, recipeHost, httpsAddr, httpAddr)
	testkit.WaitFor(t, "/health through nginx over HTTPS", 20*time.Second, func() bool {
		if proxy.Exited() {
			t.Fatalf("nginx exited:\n%s", testkit.NotableLines(proxy.Log, 50))
		}
		status, _, err := getJSON(client, "https://"+recipeHost+"/health", &h)
		return err == nil && status == http.StatusOK && h.Status == "ok" && h.Registry.Version == "0.1.1"
	})
	checkPlainHTTP(t, client, recipeHost, webroot)
	if n := proxyErrors(t, filepath.Join(dir, "error.log")); n != "" {
		t.Errorf("nginx logged errors:\n%s", n)
	}
}

// parseUnit reads a systemd unit's text into its settings, in order,
// section by section ("Service.ExecStart"); comments are left out.
func parseUnit(t *testing.T, text string) (settings [][2]string) {
	t.Helper()
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("unit file: %q is not KEY=VALUE", line)
			}
			settings = append(settings, [2]string{section + "." + k, v})
		}
	}
	return settings
}

// TestTeamRecipe runs "Run it for your team" in docs/operating.md as
// written, in an empty folder, with the built binary as 3gs and the
// address 127.0.0.1:3000 moved to a free loopback port: every command
// must succeed, doctor with nothing to warn about, and the server it
// ends with must answer /health with the node's registry, verified.
func TestTeamRecipe(t *testing.T) {
	bin := testkit.Binary(t)
	dir := t.TempDir()
	addr := testkit.FreeAddr(t)
	blocks := docShellBlocks(t, "## Run it for your team")
	served := false
	for _, line := range strings.Split(strings.TrimSpace(strings.Join(blocks, "\n")), "\n") {
		w := testkit.ShellWords(line)
		if len(w) < 2 || w[0] != "3gs" || served {
			t.Fatalf("a line the test does not know how to run (a 3gs command, the server last): %s", line)
		}
		args := slices.Clone(w[1:])
		for i := range args {
			if args[i] == "127.0.0.1:3000" {
				args[i] = addr
			}
		}
		if args[0] == "serve" {
			// From the folder the other commands ran in (env --chdir:
			// testkit.Start runs from the test's own).
			testkit.Start(t, dir, "3gs", "env", append([]string{"--chdir=" + dir, bin}, args...)...)
			var h struct {
				Status   string `json:"status"`
				Registry struct {
					Verified bool `json:"verified"`
				} `json:"registry"`
			}
			testkit.WaitFor(t, "/health of the team's server", 30*time.Second, func() bool {
				status, _, err := getJSON(http.DefaultClient, "http://"+addr+"/health", &h)
				return err == nil && status == http.StatusOK && h.Status == "ok"
			})
			if !h.Registry.Verified {
				t.Errorf("/health: %+v, want the node's registry, verified", h)
			}
			served = true
			continue
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		if args[0] == "doctor" && regexp.MustCompile(`(?m)^(WARN|FAIL) `).Match(out) {
			t.Errorf("%s warns:\n%s", line, out)
		}
	}
	if !served {
		t.Error("the recipe does not end with 3gs serve")
	}
}
