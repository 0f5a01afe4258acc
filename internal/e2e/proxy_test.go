package e2e

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// The example deployment in deploy/: 3gs under systemd (deploy/systemd)
// behind nginx with TLS (deploy/nginx). TestSystemdUnit checks the unit
// file; TestTLSReverseProxy runs the unit's command behind the nginx
// configuration and talks to it over HTTPS.

// publicName is the host name the example files use.
const publicName = "3gs.example.org"

// unitFile reads deploy/systemd/3gs.service into its settings, in order,
// section by section ("Service.ExecStart"); comments are left out.
func unitFile(t *testing.T) (text string, settings [][2]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testkit.Root(), "deploy", "systemd", "3gs.service"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data), parseUnit(t, string(data))
}

// unitExecStart is the unit's ExecStart, split into words, and the
// environment its Environment= lines set.
func unitExecStart(t *testing.T) ([]string, map[string]string) {
	t.Helper()
	_, settings := unitFile(t)
	var words []string
	env := map[string]string{}
	for _, s := range settings {
		switch s[0] {
		case "Service.ExecStart":
			words = strings.Fields(s[1])
		case "Service.Environment":
			k, v, _ := strings.Cut(s[1], "=")
			env[k] = v
		}
	}
	if len(words) < 2 || words[0] != "/usr/local/bin/3gs" || words[1] != "serve" {
		t.Fatalf("ExecStart %v does not run /usr/local/bin/3gs serve", words)
	}
	return words, env
}

// TestSystemdUnit checks deploy/systemd/3gs.service: the hardening it
// promises is there, its command line and environment are ones 3gs
// accepts, and systemd itself reads the file without a complaint and
// rates its exposure low (systemd-analyze verify and security --offline,
// when systemd-analyze is installed; the checks before it run anywhere).
func TestSystemdUnit(t *testing.T) {
	text, settings := unitFile(t)
	has := map[string][]string{}
	for _, s := range settings {
		has[s[0]] = append(has[s[0]], s[1])
	}
	for key, want := range map[string]string{
		"DynamicUser": "yes", "StateDirectory": "3gs", "ProtectSystem": "strict",
		"ProtectHome": "yes", "NoNewPrivileges": "yes", "PrivateTmp": "yes",
		"PrivateDevices": "yes", "CapabilityBoundingSet": "", "MemoryDenyWriteExecute": "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX", "SystemCallFilter": "@system-service",
		"LockPersonality": "yes", "RestrictNamespaces": "yes", "UMask": "0077",
	} {
		if v := has["Service."+key]; len(v) == 0 || v[0] != want {
			t.Errorf("3gs.service: %s=%v, want %q", key, v, want)
		}
	}

	bin := testkit.Binary(t)
	words, env := unitExecStart(t)
	flags := serveFlags(t, bin)
	for i, w := range words[2:] {
		if name, ok := strings.CutPrefix(w, "--"); ok && !flags[name] {
			t.Errorf("ExecStart: 3gs serve has no flag %s", w)
		}
		if w == "--http" && !strings.HasPrefix(words[2+i+1], "127.0.0.1:") {
			t.Errorf("ExecStart: --http %s is not on loopback, where only the proxy reaches it", words[2+i+1])
		}
	}
	help, _ := exec.Command(bin, "serve", "--help").CombinedOutput()
	// The commented-out lines of a curator node count too.
	for _, m := range regexp.MustCompile(`(?m)^#?Environment=(\w+)=`).FindAllStringSubmatch(text, -1) {
		if !strings.Contains(string(help), "(env "+m[1]+";") {
			t.Errorf("Environment=%s is not a variable 3gs serve reads", m[1])
		}
	}
	if env["REGISTRY_PATH"] != "%S/3gs/registry.json" {
		t.Errorf("REGISTRY_PATH=%s is not in the state directory", env["REGISTRY_PATH"])
	}
	// The node holds the curator key, so it signs again before the
	// signature expires, and the tokens file; both as credentials from
	// /etc/3gs, which stays root's.
	for name, variable := range map[string]string{"curator.key": "THREEGS_KEY_FILE", "tokens.json": "THREEGS_TOKENS"} {
		if !slices.Contains(has["Service.LoadCredential"], name+":/etc/3gs/"+name) || env[variable] != "%d/"+name {
			t.Errorf("3gs.service does not hand %s over as a credential (LoadCredential=%s:/etc/3gs/%s, Environment=%s=%%d/%s): %v, %s=%q", name, name, name, variable, name, has["Service.LoadCredential"], variable, env[variable])
		}
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (it comes with systemd); the unit was checked by the rules above only")
	}
	// verify needs the executable to exist; the copy names the binary just
	// built instead, and nothing else changes. The second copy is the
	// keyless read replica docs/operating.md describes ("Without the
	// key"): no credentials, no registry file, --follow on the command.
	dir := t.TempDir()
	curator := strings.Replace(text, "\nExecStart=/usr/local/bin/3gs ", "\nExecStart="+bin+" ", 1)
	if curator == text {
		t.Fatal("3gs.service has no line ExecStart=/usr/local/bin/3gs ...")
	}
	replica := regexp.MustCompile(`(?m)^(LoadCredential=.*|Environment=(THREEGS_KEY_FILE|THREEGS_TOKENS|REGISTRY_PATH)=.*)\n`).ReplaceAllString(curator, "")
	replica = strings.Replace(replica, " serve --http ", " serve --follow https://origin.example.org --follow-pubkey pk:CURATORKEY --follow-cache %S/3gs/follow --http ", 1)
	if strings.Count(curator, "\nLoadCredential=")-strings.Count(replica, "\nLoadCredential=") != 2 || !strings.Contains(replica, "--follow ") {
		t.Fatal("3gs.service does not have the two LoadCredential lines of a curator node, or the replica's edit did not apply")
	}
	for name, unit := range map[string]string{"3gs.service": curator, "3gs-replica.service": replica} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(analyze, "verify", path).CombinedOutput()
		if err != nil || strings.Contains(string(out), name) {
			t.Errorf("systemd-analyze verify %s: %v\n%s", name, err, out)
		} else if len(out) > 0 {
			t.Logf("systemd-analyze verify %s, about other units:\n%s", name, out)
		}
		out, err = exec.Command(analyze, "security", "--offline=true", path).CombinedOutput()
		m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`).FindSubmatch(out)
		if err != nil || m == nil {
			t.Errorf("systemd-analyze security --offline=true %s: %v\n%s", name, err, out)
			continue
		}
		// systemd rates 0 to 10; below 2 is its best band, "OK".
		score, _ := strconv.ParseFloat(string(m[1]), 64)
		if score >= 2 {
			t.Errorf("%s: exposure %.1f, want below 2 (OK)\n%s", name, score, out)
		}
		t.Logf("%s: systemd-analyze security: exposure %.1f", name, score)
	}
}

// TestTLSReverseProxy runs deploy/nginx/3gs.conf, from Debian's nginx,
// in front of the command deploy/systemd/3gs.service runs, all on
// loopback, with a certificate for 3gs.example.org from a CA made here.
// Over HTTPS, as a client of the public name: /health, a 2025-11-25
// session (initialize, then a tool call in it), a 2026-07-28 stateless
// call, the download address get_provenance gives, the Host gate still
// refusing a name it was not given, and plain HTTP sent to HTTPS.
func TestTLSReverseProxy(t *testing.T) {
	nginx := testkit.NeedDebianPackage(t, "nginx")
	bin := testkit.Binary(t)
	dir := t.TempDir()
	ca := writeTestCertificates(t, dir, publicName)

	// 3gs as the unit runs it, on a loopback port the system picks,
	// serving the embedded registry (the unit's REGISTRY_PATH names a file
	// of the machine it is installed on).
	words, _ := unitExecStart(t)
	args := append([]string(nil), words[1:]...)
	for i := range args {
		if args[i] == "--http" {
			args[i+1] = "127.0.0.1:0"
		}
	}
	threegs := testkit.Start(t, dir, "3gs", bin, args...)
	backend := threegs.WaitLog(t, testkit.Serving, 0, 30*time.Second)[1]

	httpsAddr, httpAddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	conf := nginxConfig(t, dir, backend, httpsAddr, httpAddr)
	proxy := startNginx(t, nginx, dir, conf)

	// A client that resolves the public name to the proxy's loopback
	// ports and trusts only the test's CA.
	client := pinnedClient(ca, publicName, httpsAddr, httpAddr)
	base := "https://" + publicName
	testkit.WaitFor(t, "/health through nginx", 20*time.Second, func() bool {
		if proxy.Exited() {
			t.Fatalf("nginx exited:\n%s", testkit.NotableLines(proxy.Log, 50))
		}
		h, err := getHealth(client, base)
		return err == nil && h.Status == "ok"
	})
	resp, err := client.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 || resp.Header.Get("Strict-Transport-Security") == "" {
		t.Errorf("/health: HTTP %d, TLS %+v, headers %v", resp.StatusCode, resp.TLS, resp.Header)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	session, a, err := openSession(ctx, client, base+"/mcp")
	if err != nil {
		t.Fatalf("a 2025-11-25 session through nginx: %v (%.300s)", err, a.body)
	}
	var got sourcesAnswer
	if err := post(ctx, client, base+"/mcp", sessionCall(session, 1, "get_sources", map[string]any{"query": "learn rust"}), "").result(1, &got); err != nil || got.Slug != "rust-learning" {
		t.Errorf("get_sources in the session: %v %+v", err, got)
	}
	got = sourcesAnswer{}
	if err := post(ctx, client, base+"/mcp", statelessCall(2, "get_sources", map[string]any{"query": "learn rust"}), "").result(2, &got); err != nil || got.Slug != "rust-learning" {
		t.Errorf("a 2026-07-28 stateless get_sources: %v %+v", err, got)
	}
	// --public-url: the verification steps download from the public name.
	var prov struct {
		Verification json.RawMessage `json:"verification"`
	}
	if err := post(ctx, client, base+"/mcp", statelessCall(3, "get_provenance", map[string]any{}), "").result(3, &prov); err != nil {
		t.Error(err)
	} else if !strings.Contains(string(prov.Verification), base+"/registry") {
		t.Errorf("get_provenance does not download from %s/registry: %s", base, prov.Verification)
	}
	// The registry's bytes come through unchanged.
	reg := getBytes(t, client, base+"/registry")
	if len(reg) == 0 || !json.Valid(reg) {
		t.Errorf("/registry through nginx: %.200s", reg)
	}

	// Another name, even over the same certificate and connection, is
	// refused by 3gs itself: the proxy passes the Host on unchanged.
	req, _ := http.NewRequest(http.MethodGet, base+"/health", nil)
	req.Host = "rebinding.example"
	if resp, err := client.Do(req); err != nil {
		t.Error(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("Host rebinding.example through nginx: HTTP %d, want 403", resp.StatusCode)
		}
	}

	// Plain HTTP is only a redirect to HTTPS, and the ACME challenges.
	checkPlainHTTP(t, client, publicName, filepath.Join(dir, "webroot"))
	if n := proxyErrors(t, filepath.Join(dir, "error.log")); n != "" {
		t.Errorf("nginx logged errors:\n%s", n)
	}
	// The calls went through nginx, not around it.
	access, _ := os.ReadFile(filepath.Join(dir, "access.log"))
	if n := strings.Count(string(access), `"POST /mcp HTTP/1.1" 200 `); n < 4 {
		t.Errorf("nginx logged %d answered POST /mcp, want at least 4:\n%s", n, access)
	}
	version, _ := exec.Command(nginx, "-v").CombinedOutput()
	t.Logf("%s: %d requests through it", strings.TrimSpace(string(version)), strings.Count(string(access), "\n"))
}

// nginxConfig writes the test's nginx.conf: the few top-level settings a
// server needs to run from dir as any user, and deploy/nginx/3gs-http.conf
// and deploy/nginx/3gs.conf with the test's addresses, certificate and
// ACME webroot (dir/webroot) in place of the example's.
func nginxConfig(t *testing.T, dir, backend, httpsAddr, httpAddr string) string {
	t.Helper()
	var site string
	for _, name := range []string{"3gs-http.conf", "3gs.conf"} {
		data, err := os.ReadFile(filepath.Join(testkit.Root(), "deploy", "nginx", name))
		if err != nil {
			t.Fatal(err)
		}
		site += string(data) + "\n"
	}
	site = rewriteSite(t, site, publicName, "/var/www/letsencrypt", dir, backend, httpsAddr, httpAddr)
	sitePath := filepath.Join(dir, "3gs.conf")
	if err := os.WriteFile(sitePath, []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	return nginxMain(t, dir, sitePath)
}

// rewriteSite puts the test's addresses, certificate (in dir) and ACME
// webroot (dir/webroot) in place of an nginx site's for host, whose
// webroot is webroot. Each replaced text must be found, so an edit of the
// example that the test no longer follows fails here rather than testing
// something else.
func rewriteSite(t *testing.T, site, host, webroot, dir, backend, httpsAddr, httpAddr string) string {
	t.Helper()
	for _, r := range []struct{ old, new string }{
		{"server 127.0.0.1:8080;", "server " + backend + ";"},
		{"listen 80;", "listen " + httpAddr + ";"},
		{"listen [::]:80;\n", ""},
		{"listen 443 ssl;", "listen " + httpsAddr + " ssl;"},
		{"listen [::]:443 ssl;\n", ""},
		{"root " + webroot + ";", "root " + filepath.Join(dir, "webroot") + ";"},
		{"/etc/letsencrypt/live/" + host + "/fullchain.pem", filepath.Join(dir, "fullchain.pem")},
		{"/etc/letsencrypt/live/" + host + "/privkey.pem", filepath.Join(dir, "privkey.pem")},
	} {
		if strings.Count(site, r.old) != 1 {
			t.Fatalf("the nginx site holds %q %d times, not once:\n%s", r.old, strings.Count(site, r.old), site)
		}
		site = strings.Replace(site, r.old, r.new, 1)
	}
	return site
}

// nginxMain writes dir/nginx.conf, which runs nginx from dir as any user
// and includes sitePath.
func nginxMain(t *testing.T, dir, sitePath string) string {
	t.Helper()
	// As root, nginx runs its workers as nobody, who must reach the temp
	// directories and the webroot under dir (a request body too large for
	// memory goes there): dir and its parent, both 0700 from t.TempDir, are
	// opened for traversal. The key stays readable by root alone; the
	// master reads it.
	if os.Geteuid() == 0 {
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if err := os.Chmod(d, 0o711); err != nil {
				t.Fatal(err)
			}
		}
	}
	main := fmt.Sprintf(`pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
worker_processes 1;
events { worker_connections 256; }
http {
    access_log %[1]s/access.log;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[2]s;
}
`, dir, sitePath)
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkPlainHTTP checks port 80 of the nginx site for host: a request is
// sent to HTTPS, and an ACME HTTP-01 challenge written in webroot, as
// certbot --webroot writes it, is answered as it is.
func checkPlainHTTP(t *testing.T, client *http.Client, host, webroot string) {
	t.Helper()
	if resp, err := client.Get("http://" + host + "/mcp"); err != nil {
		t.Error(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "https://"+host+"/mcp" {
			t.Errorf("plain HTTP: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	challenge := filepath.Join(webroot, ".well-known", "acme-challenge")
	if err := os.MkdirAll(challenge, 0o755); err != nil {
		t.Fatal(err)
	}
	const token, keyAuth = "Yq3gsChallengeToken_x-1", "Yq3gsChallengeToken_x-1.thumbprint"
	if err := os.WriteFile(filepath.Join(challenge, token), []byte(keyAuth), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get("http://" + host + "/.well-known/acme-challenge/" + token)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != keyAuth {
		t.Errorf("the ACME challenge over plain HTTP: %d %q (Location %q), want 200 %q", resp.StatusCode, body, resp.Header.Get("Location"), keyAuth)
	}
	if resp, err := client.Get("http://" + host + "/.well-known/acme-challenge/missing"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("a challenge that does not exist: %d, want 404", resp.StatusCode)
		}
	}
}

// proxyErrors is what nginx logged at [error] or worse.
func proxyErrors(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var bad []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if regexp.MustCompile(`\[(error|crit|alert|emerg)\]`).MatchString(sc.Text()) {
			bad = append(bad, sc.Text())
		}
	}
	return strings.Join(bad, "\n")
}

// writeTestCertificates makes a CA and a certificate it signs for
// name, writes the certificate chain and key where nginxConfig
// points, and returns the pool a client trusting only that CA uses.
func writeTestCertificates(t *testing.T, dir, name string) *x509.CertPool {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	now := time.Now()
	caKey := newKey()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "3gs test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafKey := newKey()
	leafDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		t.Fatal(err)
	}
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})...)
	if err := os.WriteFile(filepath.Join(dir, "fullchain.pem"), chain, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "privkey.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return pool
}
