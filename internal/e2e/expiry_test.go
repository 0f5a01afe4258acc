package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// readHealth reads a node's /health as the schema types it, whatever
// its status.
func readHealth(base string) (gen.Health, error) {
	var h gen.Health
	_, _, err := getJSON(&http.Client{Timeout: 5 * time.Second}, base+"/health", &h)
	return h, err
}

// A read replica whose origin stops after serving a copy signed with a
// short expiry withholds that copy the moment it expires: /health says
// expired and not verified, get_provenance says expired, get_sources and
// list_categories answer an error naming the expiry and the fix. The
// origin's address then answers with an older signature for the same
// bytes (valid, longer-lived): refused, still withheld. A fresh signature
// serves again. Real processes on loopback; the waits are conditions with
// deadlines.
func TestReplicaWithholdsExpiredCopy(t *testing.T) {
	testkit.Long(t, "it waits for a signature to expire, 30 s after signing")
	t.Parallel() // half a minute of waiting, in which other tests can run
	bin := testkit.Binary(t)
	dir := t.TempDir()
	cur := curator.New(t, "origin")
	doc := oneTopic("Origin O", "sourdough-starters", "Sourdough Starters", "sourdough starter feeding",
		[3]string{"https://o.example/one", "https://o.example/two", "https://o.example/three"})
	doc.Curator.Pubkey = cur.Pub
	data := gen.EncodeRegistry(&doc)
	// Long enough for two processes to start on a loaded machine; the
	// test waits for the expiry, whatever it is.
	signedAt := time.Now().UTC().Truncate(time.Second)
	expires := signedAt.Add(30 * time.Second)
	if err := os.WriteFile(cur.Registry, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cur.Registry+signature.Suffix, signature.SignWith(data, cur.Key, signedAt, signature.Options{Expires: expires}), 0o644); err != nil {
		t.Fatal(err)
	}
	// No curator key: the origin does not renew the signature. Its port
	// is one no bind of port 0 is given (testkit.FreeAddr), so a server
	// another test starts meanwhile cannot take it while the stand-in
	// below waits to listen there.
	origin := testkit.Start(t, dir, "origin", bin, "serve", "--http", testkit.FreeAddr(t), "--registry", cur.Registry)
	addr := origin.WaitLog(t, testkit.Serving, 0, 30*time.Second)[1]
	replica := testkit.Start(t, dir, "replica", bin, "serve", "--http", "127.0.0.1:0", "--follow", "http://"+addr, "--follow-pubkey", cur.Pub,
		"--follow-refresh", "1s", "--follow-cache", filepath.Join(dir, "follow-cache"))
	base := "http://" + replica.WaitLog(t, testkit.Serving, 0, 30*time.Second)[1]
	mcpURL := base + "/mcp"
	query := map[string]any{"query": "how often should I feed my sourdough starter"}

	if time.Now().Before(expires) {
		h, err := readHealth(base)
		if err != nil || h.Registry == nil || !h.Registry.Verified || h.Registry.Expired != nil {
			t.Fatalf("before the expiry: /health %+v %v", h.Registry, err)
		}
		if a := testkit.CallTool(t, mcpURL, "get_sources", query); a.IsError || !strings.Contains(a.Text, "o.example/one") {
			t.Fatalf("before the expiry: get_sources %+v", a)
		}
	} else {
		t.Log("the machine took until the expiry to start both processes; the in-force checks are left out")
	}
	origin.Kill()

	expired := func() bool {
		h, err := readHealth(base)
		return err == nil && h.Registry != nil && h.Registry.Expired != nil && *h.Registry.Expired
	}
	testkit.WaitFor(t, "the replica's /health saying its copy expired", time.Until(expires)+time.Minute, expired)
	h, err := readHealth(base)
	if err != nil || h.Registry.Verified || h.Registry.Expires == nil || !h.Registry.Expires.Equal(expires.Truncate(time.Second)) ||
		h.Follow == nil || h.Follow.Expired == nil || !*h.Follow.Expired {
		t.Fatalf("after the expiry: /health registry %+v follow %+v %v", h.Registry, h.Follow, err)
	}
	checkWithheld := func(when string) {
		t.Helper()
		for _, c := range []struct {
			tool string
			args any
		}{{"get_sources", query}, {"get_sources", map[string]any{"slug": "sourdough-starters"}}, {"list_categories", map[string]any{}}} {
			a := testkit.CallTool(t, mcpURL, c.tool, c.args)
			if !a.IsError || !strings.Contains(a.Text, "signature expired at "+expires.Format(time.RFC3339)) || !strings.Contains(a.Text, "read replica of http://"+addr) ||
				!strings.Contains(a.Text, "3gs sign") || strings.Contains(string(a.Structured), "o.example") {
				t.Errorf("%s: %s %v answered %+v; want an error naming the expiry and the fix, and no sources", when, c.tool, c.args, a)
			}
		}
		var prov gen.GetProvenanceOutput
		a := testkit.CallTool(t, mcpURL, "get_provenance", map[string]any{})
		if err := json.Unmarshal(a.Structured, &prov); err != nil || a.IsError || prov.Verified || prov.Expired == nil || !*prov.Expired ||
			!strings.HasPrefix(prov.SignatureDetail, "EXPIRED") || !strings.Contains(a.Text, "Signature: EXPIRED, not verified") {
			t.Errorf("%s: get_provenance %+v (%v)", when, a, err)
		}
	}
	checkWithheld("after the expiry")

	// The origin's address answers again, with an older signature for
	// the same bytes that is valid for a day: a rollback, refused.
	older := signature.SignWith(data, cur.Key, signedAt.Add(-time.Hour), signature.Options{Expires: time.Now().Add(24 * time.Hour)})
	from := replica.LogSize()
	fake := startFakeOrigin(t, addr, data, older)
	replica.WaitLog(t, regexp.MustCompile(regexp.QuoteMeta("rollback: the signature was made at "+signedAt.Add(-time.Hour).Format(time.RFC3339))), from, time.Minute)
	if !expired() {
		t.Fatalf("an older signature made the expired copy served again")
	}
	checkWithheld("after an older signature")

	// A fresh signature serves again.
	fake.set(data, signature.SignWith(data, cur.Key, time.Now(), signature.Options{Expires: time.Now().Add(24 * time.Hour)}))
	testkit.WaitFor(t, "the replica serving the fresh signature", time.Minute, func() bool {
		h, err := readHealth(base)
		return err == nil && h.Registry != nil && h.Registry.Verified && h.Registry.Expired == nil && h.Follow != nil && h.Follow.Expired == nil
	})
	if a := testkit.CallTool(t, mcpURL, "get_sources", query); a.IsError || !strings.Contains(a.Text, "o.example/one") {
		t.Fatalf("after a fresh signature: get_sources %+v", a)
	}
}

// A symbolic link at REGISTRY.peers/<key>.json pointing at another file:
// the node fetches and serves the peer, the other file keeps its bytes,
// and the node's log says why the cache was neither read nor written.
func TestPeerCacheSymlinkRefused(t *testing.T) {
	bin := testkit.Binary(t)
	a, b := curator.New(t, "a"), curator.New(t, "b")
	b.Write(t, oneTopic("Baker B", "sourdough-starters", "Sourdough Starters", "sourdough starter feeding",
		[3]string{"https://b.example/one", "https://b.example/two", "https://b.example/three"}))
	sb := testkit.Serve(t, bin, "--registry", b.Registry, "--key-file", b.KeyFile)
	doc := oneTopic("Admirer A", "garden-birds", "Garden Birdwatching", "identify garden birds",
		[3]string{"https://a.example/one", "https://a.example/two", "https://a.example/three"})
	doc.Endorsements = []gen.Endorsement{{Pubkey: b.Pub, URL: nodeURL(sb.URL), Name: ptrTo("Baker B"), Since: "2026-11-25"}}
	a.Write(t, doc)

	// The default cache directory, REGISTRY.peers, with a link in B's
	// file's place to a file the node must never write.
	cache := a.Registry + ".peers"
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "authorized_keys")
	const precious = "ssh-ed25519 AAAA... admin@example\n"
	if err := os.WriteFile(victim, []byte(precious), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(cache, strings.TrimPrefix(b.Pub, "pk:")+".json")
	if err := os.Symlink(victim, link); err != nil {
		t.Skip(err)
	}
	sa := testkit.Serve(t, bin, "--registry", a.Registry, "--key-file", a.KeyFile)
	// The cache is written before the peer is reported fresh.
	waitPeers(t, sa, func(p gen.HealthPeers) bool { return p.Fresh == 1 })
	if data, _ := os.ReadFile(victim); string(data) != precious {
		t.Fatalf("the file the link names was overwritten:\n%.200s", data)
	}
	testkit.WaitFor(t, "the node logging that it did not write the cache", time.Minute, func() bool {
		return strings.Contains(sa.Stderr(), "peer cache not written")
	})
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is gone: %v", err)
	}
	log := sa.Stderr()
	for _, want := range []string{`msg="peer cache refused"`, "is a symbolic link (to " + victim + ")", "refusing to write through it"} {
		if !strings.Contains(log, want) {
			t.Errorf("the node's log does not say %q:\n%s", want, log)
		}
	}
	var fed gen.GetFederatedSourcesOutput
	callTool(t, sa.URL, "get_federated_sources", map[string]any{"query": "how often should I feed my sourdough starter"}, &fed)
	if len(fed.Results) == 0 || fed.Results[0].Curator.Pubkey != b.Pub {
		t.Errorf("the peer is not served from memory: %+v", fed.Results)
	}
}

// 3gs verify exits 1 on a signature that expired 47 hours ago, naming
// the date and the fix; the same files signed to expire later are OK.
func TestVerifyExpiredSignature(t *testing.T) {
	bin := testkit.Binary(t)
	cur := curator.New(t, "v")
	doc := oneTopic("Verifier V", "garden-birds", "Garden Birdwatching", "identify garden birds",
		[3]string{"https://v.example/one", "https://v.example/two", "https://v.example/three"})
	doc.Curator.Pubkey = cur.Pub
	data := gen.EncodeRegistry(&doc)
	os.WriteFile(cur.Registry, data, 0o644)
	expires := time.Now().Add(-47 * time.Hour).UTC().Truncate(time.Second)
	os.WriteFile(cur.Registry+signature.Suffix, signature.SignWith(data, cur.Key, expires.Add(-30*24*time.Hour), signature.Options{Expires: expires}), 0o644)
	out, err := exec.Command(bin, "verify", "--pubkey", cur.Pub, cur.Registry).Output()
	if exitCode(err) != 1 || !strings.HasPrefix(string(out), "FAIL: ") || !strings.Contains(string(out), "the signature expired at "+expires.Format(time.RFC3339)) || !strings.Contains(string(out), "3gs sign --key-file KEY") {
		t.Errorf("expired: exit %d, %s", exitCode(err), out)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	os.WriteFile(cur.Registry+signature.Suffix, signature.SignWith(data, cur.Key, time.Now(), signature.Options{Expires: until}), 0o644)
	out, err = exec.Command(bin, "verify", "--pubkey", cur.Pub, cur.Registry).Output()
	if err != nil || !strings.Contains(string(out), "OK: signed by") || !strings.Contains(string(out), "in force until "+until.Format(time.RFC3339)) {
		t.Errorf("in force: %v, %s", err, out)
	}
}
