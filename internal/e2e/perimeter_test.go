package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// The network's perimeter (issue 34), against a real node on loopback:
// A endorses eight hostile or broken peers and one good one, and an
// internal service on another loopback port holds a secret. Whatever the
// peers do (redirect to the secret service, sit on a closed or an open
// port, hide behind a name that resolves to loopback, send compressed or
// whitespace-padded registries), nothing of the secret service is asked
// or shown, a closed port reads exactly as an open one, every reason
// anyone can see is coarse, and the node's memory stays small.
func TestPerimeter(t *testing.T) {
	t.Parallel() // its own processes, ports and files
	bin := testkit.Binary(t)
	internal, secretHits := secretService(t)
	internalPort := internal.URL[strings.LastIndex(internal.URL, ":")+1:]

	serve := func(h http.HandlerFunc) *httptest.Server {
		s := httptest.NewServer(h)
		t.Cleanup(s.Close)
		return s
	}
	signedTopic := func(c *curator.Node, slug string) (reg, sig []byte) {
		c.Write(t, oneTopic("Peer "+slug, slug, "Topic "+slug, "all about "+slug, [3]string{"https://p.example/1", "https://p.example/2", "https://p.example/3"}))
		reg, _ = os.ReadFile(c.Registry)
		sig, _ = os.ReadFile(c.Registry + signature.Suffix)
		return reg, sig
	}
	// whitespaceSigned is c's one-topic registry padded to size with
	// whitespace before its last brace, validly signed.
	whitespaceSigned := func(c *curator.Node, size int) (reg, sig []byte) {
		reg, _ = signedTopic(c, "padded")
		reg = bytes.TrimSpace(reg)
		reg = reg[:len(reg)-1] // its last brace
		reg = append(reg, bytes.Repeat([]byte(" "), size-len(reg)-2)...)
		reg = append(reg, "}\n"...)
		return reg, signature.Sign(reg, c.Key, time.Now())
	}
	node := func(reg, sig []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { testkit.ServeRegistry(w, r, reg, sig) }
	}

	type row struct {
		name   string
		cur    *curator.Node
		url    string
		status gen.EndorsedPeerStatus
		reason gen.EndorsedPeerReason // "" for none
	}
	var rows []*row
	add := func(name, url string, status gen.EndorsedPeerStatus, reason gen.EndorsedPeerReason) *row {
		r := &row{name: name, cur: curator.New(t, fmt.Sprintf("p%d", len(rows))), url: url, status: status, reason: reason}
		rows = append(rows, r)
		return r
	}

	// 1. Redirects every request to the internal service.
	redirect := serve(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL+r.URL.Path, http.StatusFound)
	})
	add("redirect to an internal port", redirect.URL, gen.EndorsedPeerStatusRefused, gen.EndorsedPeerReasonRefusedRedirect)
	// 2 and 3. A closed port and an open one that answers 404: alike.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	add("closed port", closed, gen.EndorsedPeerStatusUnreachable, gen.EndorsedPeerReasonUnreachable)
	open404 := serve(http.NotFound)
	add("open port, 404", open404.URL, gen.EndorsedPeerStatusUnreachable, gen.EndorsedPeerReasonUnreachable)
	// 4. A good peer, but named by a host name that resolves to loopback.
	byName := add("a name resolving to loopback", "", gen.EndorsedPeerStatusRefused, gen.EndorsedPeerReasonRefusedAddressNotAllowed)
	byNameSrv := serve(node(signedTopic(byName.cur, "by-name")))
	byName.url = strings.Replace(byNameSrv.URL, "127.0.0.1", "localhost", 1)
	// 5. 1 MB of zeros, gzip-encoded (about 1 KB on the wire).
	var zeros bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&zeros, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	gz := serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.Write(zeros.Bytes())
	})
	add("gzip of 1 MB of zeros", gz.URL, gen.EndorsedPeerStatusRefused, gen.EndorsedPeerReasonRefusedEncoding)
	// 6. A validly signed registry of 30 MB, nearly all whitespace, sent
	// as is: under --peer-max-bytes, refused by its shape.
	padded := add("30 MB padded, signed", "", gen.EndorsedPeerStatusRefused, gen.EndorsedPeerReasonRefusedTooLarge)
	padded.url = serve(node(whitespaceSigned(padded.cur, 30<<20))).URL
	// 7. The same made 250 MB (under the old 256 MiB default) and
	// gzip-encoded: a few hundred KB on the wire.
	big := add("250 MB padded, signed, compressed", "", gen.EndorsedPeerStatusRefused, gen.EndorsedPeerReasonRefusedEncoding)
	bigReg, bigSig := whitespaceSigned(big.cur, 250<<20)
	var bigGz bytes.Buffer
	bw, _ := gzip.NewWriterLevel(&bigGz, gzip.BestCompression)
	bw.Write(bigReg)
	bw.Close()
	bigReg = nil
	t.Logf("the 250 MB registry is %d bytes gzip-encoded", bigGz.Len())
	big.url = serve(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/registry.sig" {
			w.Write(bigSig)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.Write(bigGz.Bytes())
	}).URL
	// 8. A good peer named by its literal loopback address: the operator's
	// choice, fetched.
	good := add("a good peer at a literal address", "", gen.EndorsedPeerStatusFresh, "")
	good.url = serve(node(signedTopic(good.cur, "good-topic"))).URL

	a := curator.New(t, "a")
	doc := oneTopic("Node A", "node-a-topic", "Node A topic", "about node a", [3]string{"https://a.example/1", "https://a.example/2", "https://a.example/3"})
	for _, r := range rows {
		doc.Endorsements = append(doc.Endorsements, gen.Endorsement{Pubkey: r.cur.Pub, URL: r.url, Name: ptrTo(r.name), Since: "2026-11-25"})
	}
	a.Write(t, doc)
	sa := testkit.Serve(t, bin, "--registry", a.Registry, "--key-file", a.KeyFile, "--peer-cache", filepath.Join(a.Dir, "peers"), "--peer-timeout", "10s")
	waitPeers(t, sa, func(p gen.HealthPeers) bool { return p.Endorsed == len(rows) && p.Pending == 0 })

	// What anyone can read: get_endorsements, get_federated_sources,
	// get_provenance, list_categories, /health, whole.
	var public []string
	ends := rawTool(t, sa.URL, "get_endorsements", map[string]any{})
	public = append(public, string(ends))
	for _, q := range []map[string]any{{"query": "all about good-topic"}, {"query": "secret internal value"}} {
		public = append(public, string(rawTool(t, sa.URL, "get_federated_sources", q)))
	}
	public = append(public, string(rawTool(t, sa.URL, "get_provenance", map[string]any{})))
	resp, err := http.Get(nodeURL(sa.URL) + "/health")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	public = append(public, string(h))

	var out struct {
		Result struct {
			StructuredContent gen.GetEndorsementsOutput `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(ends, &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]gen.EndorsedPeer{}
	for _, e := range out.Result.StructuredContent.Endorsements {
		got[e.Pubkey] = e
	}
	for _, r := range rows {
		e := got[r.cur.Pub]
		reason := gen.EndorsedPeerReason("")
		if e.Reason != nil {
			reason = *e.Reason
		}
		t.Logf("%-45s %s: %s, %q", r.name, r.url, e.Status, reason)
		if e.Status != r.status || reason != r.reason {
			t.Errorf("%s: %s %q, want %s %q", r.name, e.Status, reason, r.status, r.reason)
		}
	}
	// A closed port and an open one read the same in everything public.
	c, o := got[rows[1].cur.Pub], got[rows[2].cur.Pub]
	if c.Status != o.Status || (c.Reason == nil) != (o.Reason == nil) || c.Reason != nil && *c.Reason != *o.Reason {
		t.Errorf("a closed port (%+v) reads differently from an open one (%+v)", c, o)
	}
	for _, p := range public {
		for _, leak := range []string{secret, ":" + internalPort, "algorithm", "HTTP 404", "connection refused", "Content-Encoding", "whitespace between", "not a public address", "redirected"} {
			if strings.Contains(p, leak) {
				t.Errorf("public output holds %q:\n%.2000s", leak, p)
			}
		}
	}
	if n := secretHits.Load(); n != 0 {
		t.Errorf("the internal service was asked %d times", n)
	}
	// The operator's log has the detail.
	logs := sa.Stderr()
	for _, want := range []string{"only to the same scheme, host and port", "not a public address", "Content-Encoding", "whitespace between tokens", "connection refused", "HTTP 404"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log does not say %q:\n%s", want, notable(logs))
		}
	}
	hwm := vmHWM(t, sa.Cmd.Process.Pid)
	t.Logf("node A's peak resident memory (VmHWM) after fetching every peer: %d MiB", hwm>>20)
	// Holding the 30 MB body once, while its shape is judged, is the
	// most any of these may cost; decoding it, or inflating either gzip
	// body, would cost hundreds of MB more.
	if hwm > 300<<20 {
		t.Errorf("VmHWM %d MiB: a hostile peer cost the node far more memory than its body limit", hwm>>20)
	}
}

// rawTool calls a tool over the 2026-07-28 stateless transport and
// returns the whole answer as sent, which must come with HTTP 200.
func rawTool(t *testing.T, mcpURL, tool string, args any) []byte {
	t.Helper()
	status, data := testkit.PostMCP(t, mcpURL, "tools/call", map[string]any{"name": tool, "arguments": args})
	if status != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", tool, status, data)
	}
	return data
}

var hwmLine = regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB`)

// vmHWM is process pid's peak resident memory, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	m := hwmLine.FindSubmatch(data)
	if m == nil {
		t.Fatalf("no VmHWM in /proc/%d/status", pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// notable is the log's warnings, for a failure message.
func notable(logs string) string {
	var b strings.Builder
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// A read replica's origin turns hostile: it redirects to an internal
// service, then sends a compressed body. The replica keeps serving its
// last good copy, /health says only which check failed, and nothing of
// the internal service is asked or shown.
func TestFollowerPerimeter(t *testing.T) {
	t.Parallel() // its own processes, ports and files
	bin := testkit.Binary(t)
	internal, secretHits := secretService(t)
	o := curator.New(t, "origin")
	o.Write(t, oneTopic("Origin", "origin-topic", "Origin topic", "about the origin", [3]string{"https://o.example/1", "https://o.example/2", "https://o.example/3"}))
	reg, _ := os.ReadFile(o.Registry)
	sig, _ := os.ReadFile(o.Registry + signature.Suffix)
	var mode atomic.Value
	mode.Store("good")
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load() {
		case "redirect":
			http.Redirect(w, r, internal.URL+r.URL.Path, http.StatusFound)
		case "gzip":
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			zw.Write(make([]byte, 1<<20))
			zw.Close()
		default:
			testkit.ServeRegistry(w, r, reg, sig)
		}
	}))
	defer origin.Close()
	f := testkit.Serve(t, bin, "--follow", origin.URL, "--follow-pubkey", o.Pub, "--follow-cache", filepath.Join(t.TempDir(), "cache"), "--follow-refresh", "1s")
	base := nodeURL(f.URL)
	for _, c := range []struct{ mode, reason string }{{"redirect", "refused: redirect"}, {"gzip", "refused: encoding"}} {
		mode.Store(c.mode)
		var body []byte
		testkit.WaitFor(t, "/health to report "+c.reason, 30*time.Second, func() bool {
			resp, err := http.Get(base + "/health")
			if err != nil {
				return false
			}
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			var h gen.Health
			return json.Unmarshal(body, &h) == nil && h.Follow != nil && h.Follow.Reason != nil && string(*h.Follow.Reason) == c.reason &&
				h.Registry != nil && h.Registry.Version == "1.0.0"
		})
		var h gen.Health
		json.Unmarshal(body, &h)
		fj, _ := json.Marshal(h.Follow)
		t.Logf("origin %s: /health follow: %s", c.mode, fj)
		if bytes.Contains(body, []byte(secret)) || bytes.Contains(body, []byte(internal.URL)) {
			t.Errorf("/health shows the internal service: %s", body)
		}
	}
	if n := secretHits.Load(); n != 0 {
		t.Errorf("the internal service was asked %d times", n)
	}
	// /health can report a refusal before its log line has reached the
	// test through the server's stderr: wait for the line, not for time.
	detailed := func() bool {
		logs := f.Stderr()
		return strings.Contains(logs, "only to the same scheme, host and port") && strings.Contains(logs, "Content-Encoding")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !detailed() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !detailed() {
		t.Errorf("the log lacks the detail:\n%s", notable(f.Stderr()))
	}
}

// secret is what the internal service holds; no answer to anyone may
// show it.
const secret = "TOPSECRET-VALUE-42"

// secretService is an internal service on another loopback port holding
// secret in every field a registry or signature document has, and the
// count of requests it has had, which must stay 0.
func secretService(t *testing.T) (*httptest.Server, *atomic.Int32) {
	hits := &atomic.Int32{}
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"algorithm": %q, "signature": %q, "version": %q}`, secret, secret, secret)
	}))
	t.Cleanup(internal.Close)
	return internal, hits
}
