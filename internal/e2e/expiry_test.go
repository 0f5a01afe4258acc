package e2e

import (
	"bytes"
	"encoding/json"
	"io"
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
)

// toolAnswer is a tools/call result, error results included.
type toolAnswer struct {
	IsError    bool
	Text       string
	Structured json.RawMessage
}

// callToolAnswer calls a tool over the 2026-07-28 stateless HTTP
// transport and returns its result, whether or not it is an error.
func callToolAnswer(t *testing.T, mcpURL, tool string, args any) toolAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}},
	})
	req, _ := http.NewRequest(http.MethodPost, mcpURL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var msg struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil || msg.Error != nil || len(msg.Result.Content) == 0 {
		t.Fatalf("%s: HTTP %d: %s", tool, resp.StatusCode, data)
	}
	return toolAnswer{IsError: msg.Result.IsError, Text: msg.Result.Content[0].Text, Structured: msg.Result.StructuredContent}
}

// readHealth reads a node's /health as the schema types it.
func readHealth(base string) (gen.Health, error) {
	var h gen.Health
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(base + "/health")
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return h, err
	}
	return h, json.Unmarshal(data, &h)
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
	bin := buildBinary(t)
	dir := t.TempDir()
	cur := newCurator(t, "origin")
	doc := oneTopic("Origin O", "sourdough-starters", "Sourdough Starters", "sourdough starter feeding",
		[3]string{"https://o.example/one", "https://o.example/two", "https://o.example/three"})
	doc.Curator.Pubkey = cur.pubkey
	data := gen.EncodeRegistry(&doc)
	// Long enough for two processes to start on a loaded machine; the
	// test waits for the expiry, whatever it is.
	signedAt := time.Now().UTC().Truncate(time.Second)
	expires := signedAt.Add(30 * time.Second)
	if err := os.WriteFile(cur.reg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cur.reg+signature.Suffix, signature.SignWith(data, cur.key, signedAt, signature.Options{Expires: expires}), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	// No curator key: the origin does not renew the signature.
	origin := startProc(t, dir, "origin", bin, "serve", "--http", addr, "--registry", cur.reg)
	origin.waitLog(t, serving3gs, 0, 30*time.Second)
	replica := startProc(t, dir, "replica", bin, "serve", "--http", "127.0.0.1:0", "--follow", "http://"+addr, "--follow-pubkey", cur.pubkey,
		"--follow-refresh", "1s", "--follow-cache", filepath.Join(dir, "follow-cache"))
	base := "http://" + replica.waitLog(t, serving3gs, 0, 30*time.Second)[1]
	mcpURL := base + "/mcp"
	query := map[string]any{"query": "how often should I feed my sourdough starter"}

	if time.Now().Before(expires) {
		h, err := readHealth(base)
		if err != nil || h.Registry == nil || !h.Registry.Verified || h.Registry.Expired != nil {
			t.Fatalf("before the expiry: /health %+v %v", h.Registry, err)
		}
		if a := callToolAnswer(t, mcpURL, "get_sources", query); a.IsError || !strings.Contains(a.Text, "o.example/one") {
			t.Fatalf("before the expiry: get_sources %+v", a)
		}
	} else {
		t.Log("the machine took until the expiry to start both processes; the in-force checks are left out")
	}
	origin.kill()

	expired := func() bool {
		h, err := readHealth(base)
		return err == nil && h.Registry != nil && h.Registry.Expired != nil && *h.Registry.Expired
	}
	waitFor(t, "the replica's /health saying its copy expired", time.Until(expires)+time.Minute, expired)
	h, err := readHealth(base)
	if err != nil || h.Registry.Verified || h.Registry.Expires == nil || *h.Registry.Expires != expires.Format(time.RFC3339) ||
		h.Follow == nil || h.Follow.Expired == nil || !*h.Follow.Expired {
		t.Fatalf("after the expiry: /health registry %+v follow %+v %v", h.Registry, h.Follow, err)
	}
	checkWithheld := func(when string) {
		t.Helper()
		for _, c := range []struct {
			tool string
			args any
		}{{"get_sources", query}, {"get_sources", map[string]any{"slug": "sourdough-starters"}}, {"list_categories", map[string]any{}}} {
			a := callToolAnswer(t, mcpURL, c.tool, c.args)
			if !a.IsError || !strings.Contains(a.Text, "signature expired at "+expires.Format(time.RFC3339)) || !strings.Contains(a.Text, "read replica of http://"+addr) ||
				!strings.Contains(a.Text, "3gs sign") || strings.Contains(string(a.Structured), "o.example") {
				t.Errorf("%s: %s %v answered %+v; want an error naming the expiry and the fix, and no sources", when, c.tool, c.args, a)
			}
		}
		var prov gen.GetProvenanceOutput
		a := callToolAnswer(t, mcpURL, "get_provenance", map[string]any{})
		if err := json.Unmarshal(a.Structured, &prov); err != nil || a.IsError || prov.Verified || prov.Expired == nil || !*prov.Expired ||
			!strings.HasPrefix(prov.SignatureDetail, "EXPIRED") || !strings.Contains(a.Text, "Signature: EXPIRED, not verified") {
			t.Errorf("%s: get_provenance %+v (%v)", when, a, err)
		}
	}
	checkWithheld("after the expiry")

	// The origin's address answers again, with an older signature for
	// the same bytes that is valid for a day: a rollback, refused.
	older := signature.SignWith(data, cur.key, signedAt.Add(-time.Hour), signature.Options{Expires: time.Now().Add(24 * time.Hour)})
	from := replica.logSize()
	fake := startFakeOrigin(t, addr, data, older)
	replica.waitLog(t, regexp.MustCompile(regexp.QuoteMeta("rollback: the signature was made at "+signedAt.Add(-time.Hour).Format(time.RFC3339))), from, time.Minute)
	if !expired() {
		t.Fatalf("an older signature made the expired copy served again")
	}
	checkWithheld("after an older signature")

	// A fresh signature serves again.
	fake.set(data, signature.SignWith(data, cur.key, time.Now(), signature.Options{Expires: time.Now().Add(24 * time.Hour)}))
	waitFor(t, "the replica serving the fresh signature", time.Minute, func() bool {
		h, err := readHealth(base)
		return err == nil && h.Registry != nil && h.Registry.Verified && h.Registry.Expired == nil && h.Follow != nil && h.Follow.Expired == nil
	})
	if a := callToolAnswer(t, mcpURL, "get_sources", query); a.IsError || !strings.Contains(a.Text, "o.example/one") {
		t.Fatalf("after a fresh signature: get_sources %+v", a)
	}
}

// A symbolic link at REGISTRY.peers/<key>.json pointing at another file:
// the node fetches and serves the peer, the other file keeps its bytes,
// and the node's log says why the cache was neither read nor written.
func TestPeerCacheSymlinkRefused(t *testing.T) {
	bin := buildBinary(t)
	a, b := newCurator(t, "a"), newCurator(t, "b")
	b.write(t, oneTopic("Baker B", "sourdough-starters", "Sourdough Starters", "sourdough starter feeding",
		[3]string{"https://b.example/one", "https://b.example/two", "https://b.example/three"}))
	sb := startHTTP(t, bin, "--registry", b.reg, "--key-file", b.keyPath)
	doc := oneTopic("Admirer A", "garden-birds", "Garden Birdwatching", "identify garden birds",
		[3]string{"https://a.example/one", "https://a.example/two", "https://a.example/three"})
	doc.Endorsements = []gen.Endorsement{{Pubkey: b.pubkey, URL: nodeURL(sb.url), Name: ptrTo("Baker B"), Since: "2026-11-25"}}
	a.write(t, doc)

	// The default cache directory, REGISTRY.peers, with a link in B's
	// file's place to a file the node must never write.
	cache := a.reg + ".peers"
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "authorized_keys")
	const precious = "ssh-ed25519 AAAA... admin@example\n"
	if err := os.WriteFile(victim, []byte(precious), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(cache, strings.TrimPrefix(b.pubkey, "pk:")+".json")
	if err := os.Symlink(victim, link); err != nil {
		t.Skip(err)
	}
	sa := startHTTP(t, bin, "--registry", a.reg, "--key-file", a.keyPath)
	// The cache is written before the peer is reported fresh.
	waitPeers(t, sa, func(p gen.HealthPeers) bool { return p.Fresh == 1 })
	if data, _ := os.ReadFile(victim); string(data) != precious {
		t.Fatalf("the file the link names was overwritten:\n%.200s", data)
	}
	waitFor(t, "the node logging that it did not write the cache", time.Minute, func() bool {
		return strings.Contains(sa.stderr(), "peer cache not written")
	})
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is gone: %v", err)
	}
	log := sa.stderr()
	for _, want := range []string{`msg="peer cache refused"`, "is a symbolic link (to " + victim + ")", "refusing to write through it"} {
		if !strings.Contains(log, want) {
			t.Errorf("the node's log does not say %q:\n%s", want, log)
		}
	}
	var fed gen.GetFederatedSourcesOutput
	callTool(t, sa.url, "get_federated_sources", map[string]any{"query": "how often should I feed my sourdough starter"}, &fed)
	if len(fed.Results) == 0 || fed.Results[0].Curator.Pubkey != b.pubkey {
		t.Errorf("the peer is not served from memory: %+v", fed.Results)
	}
}

// 3gs verify exits 1 on a signature that expired 47 hours ago, naming
// the date and the fix; the same files signed to expire later are OK.
func TestVerifyExpiredSignature(t *testing.T) {
	bin := buildBinary(t)
	cur := newCurator(t, "v")
	doc := oneTopic("Verifier V", "garden-birds", "Garden Birdwatching", "identify garden birds",
		[3]string{"https://v.example/one", "https://v.example/two", "https://v.example/three"})
	doc.Curator.Pubkey = cur.pubkey
	data := gen.EncodeRegistry(&doc)
	os.WriteFile(cur.reg, data, 0o644)
	expires := time.Now().Add(-47 * time.Hour).UTC().Truncate(time.Second)
	os.WriteFile(cur.reg+signature.Suffix, signature.SignWith(data, cur.key, expires.Add(-30*24*time.Hour), signature.Options{Expires: expires}), 0o644)
	out, err := exec.Command(bin, "verify", "--pubkey", cur.pubkey, cur.reg).Output()
	if exitCode(err) != 1 || !strings.HasPrefix(string(out), "FAIL: ") || !strings.Contains(string(out), "the signature expired at "+expires.Format(time.RFC3339)) || !strings.Contains(string(out), "3gs sign --key-file KEY") {
		t.Errorf("expired: exit %d, %s", exitCode(err), out)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	os.WriteFile(cur.reg+signature.Suffix, signature.SignWith(data, cur.key, time.Now(), signature.Options{Expires: until}), 0o644)
	out, err = exec.Command(bin, "verify", "--pubkey", cur.pubkey, cur.reg).Output()
	if err != nil || !strings.Contains(string(out), "OK: signed by") || !strings.Contains(string(out), "in force until "+until.Format(time.RFC3339)) {
		t.Errorf("in force: %v, %s", err, out)
	}
}
