package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// The probe category the test adds at the origin while the load runs.
const (
	probeSlug = "balancer-probe"
	probeName = "Balancer probe"
)

// TestLoadBalancedFollowers runs the deployment deploy/README.md describes,
// as real processes on loopback: an origin (a curator node with an admin
// token), three followers of it, and HAProxy from Debian's package in
// front of the followers with deploy/haproxy/haproxy.cfg. 64 clients call
// get_sources through HAProxy the whole time, half of them in 2025-11-25
// sessions (when serve has --session-secret-file) and the rest as
// 2026-07-28 stateless calls. Meanwhile:
//
//   - a category upserted at the origin is served by every follower within
//     one refresh interval plus a second of the upsert's answer;
//   - one follower is killed with SIGKILL: no request is lost that HAProxy
//     could retry, and the other two keep answering; it is then restarted
//     and taken back into rotation;
//   - the origin is replaced by one serving a tampered registry, then a
//     rolled-back one: every follower refuses both, says so in /health,
//     and keeps serving the last good version.
//
// "No lost request" means: every request a client sent got a complete,
// correct answer, except one whose answer had begun to reach the client
// (status and headers forwarded) before the follower died. HAProxy retries,
// on another follower, a request that could not be sent (conn-failure),
// that got no byte back (empty-response) or a broken header block
// (junk-response), or a 503; once it has forwarded a response's headers it
// cannot take them back, so such a cut answer is counted apart and shown,
// not failed. Every other failure (a refused or reset connection, a 5xx
// from HAProxy, a session id another follower does not know, a wrong
// answer) fails the test.
func TestLoadBalancedFollowers(t *testing.T) {
	testkit.Long(t, "it runs three followers behind HAProxy under load through a restart of each (CI also runs it alone)")
	haproxy := testkit.NeedDebianPackage(t, "haproxy")
	bin := testkit.Binary(t)
	flags := serveFlags(t, bin)
	if !flags["follow"] || !flags["follow-pubkey"] {
		t.Fatalf("3gs serve has no --follow/--follow-pubkey flags, so no follower can run")
	}
	sessions := flags["session-secret-file"]
	if !sessions {
		t.Log("3gs serve has no --session-secret-file: without it a 2025-11-25 session works only on the follower that opened it, so only 2026-07-28 calls go through the balancer")
	}
	dir := t.TempDir()
	const refresh = 2 * time.Second
	bound := refresh + time.Second // the bound for an edit to reach every follower
	direct := &http.Client{Timeout: 2 * time.Second}
	ctx := context.Background()

	// The origin: a fresh curator node with an admin token. Only the
	// curator reaches it; it is not behind the balancer.
	node := filepath.Join(dir, "origin")
	runOK(t, bin, "init", node)
	tokens := filepath.Join(dir, "tokens.json")
	token := strings.TrimSpace(runOK(t, bin, "token", "new", "--tokens", tokens, "--tier", "admin", "--name", "deploy-test"))
	var doc struct {
		Curator struct {
			Pubkey string `json:"pubkey"`
		} `json:"curator"`
	}
	if data, err := os.ReadFile(filepath.Join(node, "registry.json")); err != nil || json.Unmarshal(data, &doc) != nil || doc.Curator.Pubkey == "" {
		t.Fatalf("3gs init wrote no curator key into its registry: %v", err)
	}
	origin := testkit.Start(t, dir, "origin", bin, "serve", "--http", "127.0.0.1:0", "--registry", filepath.Join(node, "registry.json"),
		"--key-file", filepath.Join(node, "curator.key"), "--tokens", tokens)
	originAddr := origin.WaitLog(t, testkit.Serving, 0, 15*time.Second)[1]
	originURL := "http://" + originAddr

	// Three followers of it, sharing one session secret.
	secret := filepath.Join(dir, "session-secret")
	writeSessionSecret(t, secret)
	followerArgs := func(i int, addr string) []string {
		args := []string{"serve", "--http", addr, "--follow", originURL, "--follow-pubkey", doc.Curator.Pubkey,
			"--follow-refresh", refresh.String(), "--follow-cache", filepath.Join(dir, fmt.Sprintf("f%d-cache", i+1)),
			// Behind the balancer every client has its address.
			"--max-sessions-per-client", "1024"}
		if sessions {
			args = append(args, "--session-secret-file", secret)
		}
		return args
	}
	var followers [3]*testkit.Proc
	var addrs [3]string
	var bases []string
	for i := range followers {
		followers[i] = testkit.Start(t, dir, fmt.Sprintf("f%d", i+1), bin, followerArgs(i, "127.0.0.1:0")...)
		addrs[i] = followers[i].WaitLog(t, testkit.Serving, 0, 15*time.Second)[1]
		bases = append(bases, "http://"+addrs[i])
	}

	// HAProxy in front of them, with the example configuration.
	lbAddr := testkit.FreeAddr(t)
	cfg := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(haproxyConfig(t, lbAddr, addrs)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(haproxy, "-c", "-f", cfg).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c rejects the configuration: %v\n%s", err, out)
	}
	lb := testkit.Start(t, dir, "haproxy", haproxy, "-db", "-f", cfg)
	lbURL := "http://" + lbAddr + "/mcp"
	testkit.WaitFor(t, "HAProxy answering", 10*time.Second, func() bool {
		return post(ctx, direct, lbURL, statelessCall(1, "get_sources", map[string]any{"query": loadQuery}), "").result(1, nil) == nil
	})

	// The origin's copy before the edit, to replay as a rollback later.
	oldReg, oldSig := getBytes(t, direct, originURL+"/registry"), getBytes(t, direct, originURL+"/registry.sig")

	// The load, until the end of the test.
	tl := newTally()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	const clients = 64
	lbClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}, Timeout: 15 * time.Second}
	for i := range clients {
		era := era2026
		if sessions && i%2 == 0 {
			era = era2025
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			runClient(lbClient, lbURL, era, stop, tl)
		}()
	}
	loadStarted := time.Now()
	stopLoad := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(stopLoad)
	testkit.WaitFor(t, "the first answers through the balancer", 10*time.Second, func() bool { return tl.ok.Load() >= 10*clients })

	// 1. An edit at the origin reaches every follower within the bound.
	src := func(rank int, kind string) map[string]any {
		return map[string]any{"rank": rank, "name": fmt.Sprintf("Probe source %d", rank), "url": fmt.Sprintf("https://probe%d.example/", rank), "type": kind, "why": "Added by the deployment test."}
	}
	upsert := statelessCall(1, "upsert_category", map[string]any{"slug": probeSlug, "category": map[string]any{
		"name": probeName, "description": "A category the deployment test adds at the origin, to see it reach every follower.",
		"query_patterns": []string{"balancer probe one", "balancer probe two", "balancer probe three"},
		"sources":        []any{src(1, "tool"), src(2, "book"), src(3, "repo")},
	}})
	var up struct {
		Created         bool   `json:"created"`
		RegistryVersion string `json:"registry_version"`
	}
	if err := post(ctx, direct, originURL+"/mcp", upsert, token).result(1, &up); err != nil || !up.Created {
		t.Fatalf("upsert_category at the origin: %v (created %v)", err, up.Created)
	}
	upserted := time.Now()
	servesProbe := func(base string) (bool, string) {
		var got sourcesAnswer
		a := post(ctx, direct, base+"/mcp", statelessCall(7, "get_sources", map[string]any{"slug": probeSlug}), "")
		if err := a.result(7, &got); err != nil {
			return false, err.Error()
		}
		return got.Slug == probeSlug && got.RegistryVersion == up.RegistryVersion, fmt.Sprintf("slug %q, registry version %q", got.Slug, got.RegistryVersion)
	}
	// Polled past the bound, so that a late follower's real time is shown.
	took := waitEach(t, "the upserted category", bases, upserted, bound+2*time.Second, servesProbe)
	within(t, "to serve version "+up.RegistryVersion+" with "+probeSlug+" after the upsert's answer", took, bound)
	if t.Failed() {
		t.FailNow()
	}

	// 2. One follower dies. HAProxy retries what it had sent there on the
	// others, finds it down, and the other two carry the load.
	mark := lb.LogSize()
	killMark := mark
	followers[2].Kill()
	killed := time.Now()
	lb.WaitLog(t, regexp.MustCompile(`Server followers/f3 is DOWN`), mark, 10*time.Second)
	t.Logf("HAProxy took f3 out of rotation %s after its SIGKILL", time.Since(killed).Round(100*time.Microsecond))
	// Answers f3 wrote before it died may still be on their way to the
	// clients for a moment; the window starts once every client has had
	// time for several more calls.
	okDown := tl.ok.Load()
	testkit.WaitFor(t, "answers after f3 went down", 15*time.Second, func() bool { return tl.ok.Load() >= okDown+10*clients })
	before, okBefore := tl.served(), tl.ok.Load()
	testkit.WaitFor(t, "answers from the two followers left", 15*time.Second, func() bool { return tl.ok.Load() >= okBefore+20*clients })
	after := tl.served()
	t.Logf("while f3 was down: f1 answered %d, f2 %d, f3 %d", after["f1"]-before["f1"], after["f2"]-before["f2"], after["f3"]-before["f3"])
	if after["f1"] == before["f1"] || after["f2"] == before["f2"] || after["f3"] != before["f3"] {
		t.Errorf("with f3 down, want answers from f1 and f2 only: before %v, after %v", before, after)
	}
	for _, base := range bases[:2] {
		if ok, seen := servesProbe(base); !ok {
			t.Errorf("%s after f3 died: %s", base, seen)
		}
	}
	// The kill must have caught requests on their way to f3, or the
	// retries were not tested.
	retried, redispatched, _, _ := haproxyRetries(lb, killMark)
	t.Logf("HAProxy retried %d requests after f3's SIGKILL, %d of them on another follower", retried, redispatched)
	if retried == 0 {
		t.Errorf("HAProxy logged no retried request after f3's SIGKILL: the kill caught nothing in flight, so the test did not exercise the retries")
	}
	// Back on its port, from its cache and the origin; HAProxy's check
	// puts it back in rotation.
	mark = lb.LogSize()
	followers[2] = testkit.Start(t, dir, "f3-restarted", bin, followerArgs(2, addrs[2])...)
	followers[2].WaitLog(t, testkit.Serving, 0, 15*time.Second)
	lb.WaitLog(t, regexp.MustCompile(`Server followers/f3 is UP`), mark, 10*time.Second)
	n := tl.served()["f3"]
	testkit.WaitFor(t, "answers from the restarted f3", 10*time.Second, func() bool { return tl.served()["f3"] > n })

	// 3. The origin is replaced by one serving its current registry with
	// bytes changed after signing: every follower refuses it and keeps
	// the version it has.
	curReg, curSig := getBytes(t, direct, originURL+"/registry"), getBytes(t, direct, originURL+"/registry.sig")
	origin.Kill()
	tampered := bytes.Replace(curReg, []byte(probeName), []byte("Balancer pr0be"), 1)
	if bytes.Equal(tampered, curReg) {
		t.Fatalf("the origin's registry does not hold the probe category:\n%s", curReg)
	}
	fake := startFakeOrigin(t, originAddr, tampered, curSig)
	refused := func(want string) func(string) (bool, string) {
		return func(base string) (bool, string) {
			h, err := getHealth(direct, base)
			if err != nil {
				return false, err.Error()
			}
			if h.Follow == nil {
				return false, "no follow in /health"
			}
			return h.Follow.Status == "refused" && strings.Contains(h.Follow.Reason, want), fmt.Sprintf("status %s: %s", h.Follow.Status, h.Follow.Reason)
		}
	}
	keepsServing := func(what string) {
		for _, base := range bases {
			h, err := getHealth(direct, base)
			switch {
			case err != nil:
				t.Errorf("%s, %s: %v", what, base, err)
			case h.Registry == nil || h.Follow == nil || h.Registry.Version != up.RegistryVersion || h.Follow.Version != up.RegistryVersion:
				t.Errorf("%s, %s no longer serves version %s: %+v %+v", what, base, up.RegistryVersion, h.Registry, h.Follow)
			default:
				t.Logf("%s, %s refuses it (%s) and serves version %s", what, base, h.Follow.Reason, h.Registry.Version)
			}
			if ok, seen := servesProbe(base); !ok {
				t.Errorf("%s, %s: get_sources %s: %s", what, base, probeSlug, seen)
			}
		}
	}
	since := time.Now()
	took = waitEach(t, "refusing the tampered registry", bases, since, bound+2*time.Second, refused("signature"))
	within(t, "to refuse the tampered origin", took, bound)
	keepsServing("with a tampered origin")

	// 4. Then it serves the copy from before the edit, validly signed but
	// older than what the followers hold: a rollback, refused likewise.
	fake.set(oldReg, oldSig)
	since = time.Now()
	took = waitEach(t, "refusing the rolled-back registry", bases, since, bound+2*time.Second, refused("rollback"))
	within(t, "to refuse the rolled-back origin", took, bound)
	keepsServing("with a rolled-back origin")

	// 5. What the clients saw, the whole time.
	stopLoad()
	served := tl.served()
	t.Logf("%d clients for %s through HAProxy: %d answered (%d in 2025-11-25 sessions, %d stateless 2026-07-28), by follower f1 %d, f2 %d, f3 %d; %d lost, %d cut after their answer began",
		clients, time.Since(loadStarted).Round(time.Millisecond), tl.ok.Load(), tl.perEra[era2025].Load(), tl.perEra[era2026].Load(),
		served["f1"], served["f2"], served["f3"], tl.lost.Load(), tl.cut.Load())
	retried, redispatched, failed, abnormal := haproxyRetries(lb, 0)
	t.Logf("HAProxy's log: %d requests retried (%d on another follower), %d answered with a 5xx or nothing, %d ended abnormally", retried, redispatched, failed, abnormal)
	if failed != 0 {
		t.Errorf("HAProxy answered %d requests with a 5xx of its own or nothing", failed)
	}
	if served["none"] != 0 {
		t.Errorf("%d answers carried no X-3gs-Replica header of a known follower", served["none"])
	}
	if tl.lost.Load() != 0 || tl.cut.Load() != 0 {
		t.Logf("failed requests (first ten): %s", strings.Join(tl.examples, "\n"))
	}
	if tl.lost.Load() != 0 {
		t.Errorf("%d requests through the balancer were lost although HAProxy could have retried them", tl.lost.Load())
	}
	if (sessions && tl.perEra[era2025].Load() == 0) || tl.perEra[era2026].Load() == 0 {
		t.Errorf("an era got no answers: %d 2025-11-25, %d 2026-07-28", tl.perEra[era2025].Load(), tl.perEra[era2026].Load())
	}
}

// runOK runs the binary to completion and returns its standard output.
func runOK(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("3gs %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// within logs how long each follower took and fails for any that took
// longer than bound (or never got there: -1).
func within(t *testing.T, what string, took []time.Duration, bound time.Duration) {
	t.Helper()
	for i, d := range took {
		if d < 0 {
			continue // waitEach has said why
		}
		t.Logf("f%d took %s %s", i+1, d.Round(time.Millisecond), what)
		if d > bound {
			t.Errorf("f%d took %s %s, more than the refresh interval plus 1s (%s)", i+1, d.Round(time.Millisecond), what, bound)
		}
	}
}
