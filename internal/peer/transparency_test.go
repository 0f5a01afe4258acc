package peer

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/signature"
)

// Expiry: a signature vouches for its registry until the date it names.

// signedUntil is c's signature of data made at signedAt and expiring at
// exp, covering head when not nil.
func signedUntil(c testCurator, data []byte, exp time.Time, head *auditlog.Head) []byte {
	return signature.SignWith(data, c.key, signedAt, signature.Options{Expires: exp, Log: head})
}

// A copy whose signature expired before the fetch is what a freeze
// attack replays: refused, naming the date, and the last good copy kept.
// The refusal says it is one of expiry, so the caller's Fix can add how
// its operator accepts it anyway (serve's --allow-expired).
func TestRefusedExpired(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Fix = func(err error) string {
			if r := (*Refusal)(nil); errors.As(err, &r) && r.Public == RefusedExpired {
				return "the operator's fix"
			}
			return ""
		}
	})
	exp := h.clock.Now().Add(-time.Hour)
	acceptThenFail(t, h, func(h *harness) {
		data := registryDoc(h.peer.uri, "2.0.0", "")
		h.srv.publish(data, signedUntil(h.peer, data, exp, nil))
	}, Refused, "the signature expired at "+exp.Format(time.RFC3339), "freeze", "; the operator's fix")
}

// A signature of the form before expiry (no expires) could be replayed
// for ever: refused, telling the reader its curator must sign again with
// a current 3gs.
func TestRefusedNeverExpires(t *testing.T) {
	h := newHarness(t, nil)
	acceptThenFail(t, h, func(h *harness) {
		data := registryDoc(h.peer.uri, "2.0.0", "")
		h.srv.publish(data, signature.SignWith(data, h.peer.key, signedAt, signature.Options{}))
	}, Refused, "never expires", "sign the registry again with a current 3gs")
}

// With AllowExpired (--allow-expired), both are accepted and served.
func TestAllowExpired(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.AllowExpired = true })
	h.endorse()
	data := registryDoc(h.peer.uri, "1.0.0", "")
	h.srv.publish(data, signedUntil(h.peer, data, h.clock.Now().Add(-time.Hour), nil))
	h.refresh()
	p := h.only()
	wantOutcome(t, p, Fresh)
	if p.Copy == nil || p.Copy.Registry.Version() != "1.0.0" {
		t.Fatalf("the expired copy is not served with AllowExpired: %+v", p)
	}
	data = registryDoc(h.peer.uri, "1.1.0", "")
	h.srv.publish(data, signature.SignWith(data, h.peer.key, signedAt, signature.Options{}))
	h.refresh()
	if p := h.only(); p.Status != Fresh || p.Copy == nil || p.Copy.Registry.Version() != "1.1.0" {
		t.Fatalf("a never-expiring copy with AllowExpired: status %s, reason %q", p.Status, p.Reason)
	}
}

// A copy that expires while held (its peer keeps serving it, or is down)
// stops being served at its expiry, without waiting for a fetch; a
// renewed signature brings it back.
func TestExpiredWhileHeld(t *testing.T) {
	h := newHarness(t, nil)
	h.endorse()
	good := h.accept("1.0.0")
	exp := good.Copy.Expires
	if want := signedAt.Add(signature.DefaultValidity); !exp.Equal(want) {
		t.Fatalf("copy expires %v, want %v", exp, want)
	}
	h.clock.Add(exp.Sub(h.clock.Now()))
	p := h.only()
	wantOutcome(t, p, Refused, "no longer served", "expired at "+exp.Format(time.RFC3339))
	if p.Copy != nil || p.Matcher != nil {
		t.Fatal("an expired copy is still served")
	}
	h.refresh()
	wantOutcome(t, h.only(), Refused, "expired at "+exp.Format(time.RFC3339))

	// The curator signs the same bytes again.
	data := good.Copy.Registry.Bytes()
	h.srv.publish(data, signature.Sign(data, h.peer.key, h.clock.Now()))
	h.refresh()
	p = h.only()
	wantOutcome(t, p, Fresh)
	if p.Copy == nil || p.Copy.Registry != good.Copy.Registry || p.Matcher != good.Matcher {
		t.Fatal("the renewed copy is not served with the registry and matcher held")
	}
}

// A cached copy whose signature expired while the server was down is
// refused at load, the peer reported refused with the reason and nothing
// served; it still bars a rollback below it.
func TestCacheExpiredRefused(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, withCache(dir))
	h.endorse()
	good := h.accept("1.0.0")
	exp := good.Copy.Expires

	h.clock.Add(exp.Sub(h.clock.Now()) + time.Hour)
	h.net = h.newNetwork(withCache(dir))
	h.endorse()
	p := h.only()
	wantOutcome(t, p, Refused, "cached copy refused", "expired at "+exp.Format(time.RFC3339))
	if p.Copy != nil || p.Matcher != nil {
		t.Fatal("an expired cached copy is served")
	}
	if log := h.log.String(); !strings.Contains(log, "peer cache refused") {
		t.Errorf("the refusal is not logged:\n%s", log)
	}

	// An older version, freshly signed, is still a rollback.
	older := registryDoc(h.peer.uri, "0.9.0", "")
	h.srv.publish(older, signature.Sign(older, h.peer.key, h.clock.Now()))
	h.refresh()
	p = h.only()
	wantOutcome(t, p, Refused, "rollback", "0.9.0", "1.0.0")
	if p.Copy != nil {
		t.Fatal("a copy is served after a refused rollback with only an expired one held")
	}

	data := good.Copy.Registry.Bytes()
	h.srv.publish(data, signature.Sign(data, h.peer.key, h.clock.Now()))
	h.refresh()
	if p := h.only(); p.Status != Fresh || p.Copy == nil {
		t.Fatalf("the copy signed again: status %s, reason %q", p.Status, p.Reason)
	}
}

// A 304 says the registry is unchanged, not its signature (a 3gs node's
// ETag is the registry's digest): once half the held signature's validity
// is gone, the signature is read again, so a renewal is taken before the
// old one expires.
func TestNotModifiedRenewsSignature(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.setETag(`"v1"`)
	h.endorse()
	good := h.accept("1.0.0")
	data := good.Copy.Registry.Bytes()
	renewedAt := signedAt.Add(signature.DefaultValidity / 2)
	renewed := signature.Sign(data, h.peer.key, renewedAt)
	h.srv.publish(data, renewed)

	h.clock.Add(time.Hour) // well before half the validity
	h.refresh()
	if _, sig, _ := h.srv.counts(); sig != 1 {
		t.Errorf("%d signature requests before a renewal is due, want 1", sig)
	}
	if p := h.only(); !bytes.Equal(p.Copy.Signature, good.Copy.Signature) {
		t.Errorf("the signature changed on a 304 before a renewal was due")
	}

	h.clock.Add(renewedAt.Sub(h.clock.Now()) + time.Minute)
	h.refresh()
	p := h.only()
	wantOutcome(t, p, Fresh)
	if _, sig, _ := h.srv.counts(); sig != 2 {
		t.Errorf("%d signature requests once a renewal is due, want 2", sig)
	}
	if !bytes.Equal(p.Copy.Signature, renewed) || !p.Copy.Expires.Equal(renewedAt.Add(signature.DefaultValidity)) {
		t.Fatalf("the renewed signature was not taken: expires %v", p.Copy.Expires)
	}
	if p.Copy.Registry != good.Copy.Registry || p.Matcher != good.Matcher {
		t.Errorf("a renewal replaced the registry or the matcher")
	}
	// Past the first signature's expiry the renewed one keeps the copy
	// served.
	h.clock.Add(good.Copy.Expires.Sub(h.clock.Now()) + time.Hour)
	h.refresh()
	wantOutcome(t, h.only(), Fresh)
}

// A 3gs node sends its current signature with a 304 (Registry-Signature);
// it is taken without asking the signature URL, and an expired one sent
// that way is refused like any.
func TestNotModifiedInlineSignature(t *testing.T) {
	h := newHarness(t, nil)
	h.endorse()
	data, sig := h.peer.signed("1.0.0", "")
	var mu sync.Mutex
	inline := sig
	h.srv.answer(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		s := inline
		mu.Unlock()
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Registry-Signature", base64.StdEncoding.EncodeToString(s))
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write(data)
	})
	h.refresh()
	good := h.only()
	wantOutcome(t, good, Fresh)

	renewed := signature.Sign(data, h.peer.key, h.clock.Now())
	mu.Lock()
	inline = renewed
	mu.Unlock()
	h.clock.Add(time.Minute)
	h.refresh()
	p := h.only()
	wantOutcome(t, p, Fresh)
	if !bytes.Equal(p.Copy.Signature, renewed) {
		t.Error("the signature sent with the 304 was not taken")
	}
	if _, sigHits, inm := h.srv.counts(); sigHits != 0 || inm != `"v1"` {
		t.Errorf("%d signature requests, If-None-Match %q; want 0 and the ETag", sigHits, inm)
	}

	exp := h.clock.Now().Add(-time.Minute)
	mu.Lock()
	inline = signedUntil(h.peer, data, exp, nil)
	mu.Unlock()
	h.refresh()
	p = h.only()
	wantOutcome(t, p, Refused, "expired at "+exp.Format(time.RFC3339))
	if !bytes.Equal(p.Copy.Signature, renewed) {
		t.Error("the copy held was replaced by a refused one")
	}
}

// The audit log: once a copy's signature names a log head, every later
// copy's log must extend it.

// history is a curator's audit log, written with the auditlog package as
// a 3gs node writes its own.
type history struct {
	t    *testing.T
	path string
	log  *auditlog.Log
	sha  string   // the registry the last entry produced
	regs [][]byte // the registries recorded, in order
}

func newHistory(t *testing.T) *history {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registry.json.audit.jsonl")
	return &history{t: t, path: path, log: auditlog.Open(path, &auditlog.Report{})}
}

// fork returns a log holding h's entries so far, continued on its own.
func (h *history) fork(key ed25519.PublicKey) *history {
	h.t.Helper()
	path := filepath.Join(h.t.TempDir(), "fork.audit.jsonl")
	data, err := os.ReadFile(h.path)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		h.t.Fatal(err)
	}
	rep, err := auditlog.Read(path, auditlog.Options{Key: key})
	if err != nil {
		h.t.Fatal(err)
	}
	return &history{t: h.t, path: path, log: auditlog.Open(path, rep), sha: h.sha}
}

// record appends, signed with key, the entry that makes data the registry.
func (h *history) record(key ed25519.PrivateKey, data []byte, version string) auditlog.Head {
	h.t.Helper()
	sum := sha256.Sum256(data)
	e := &gen.AuditEntry{Time: time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC), Action: gen.AuditActionStart, Actor: "ada", Version: version, After: hex.EncodeToString(sum[:])}
	if h.sha != "" {
		before := h.sha
		e.Action, e.Before = gen.AuditActionUpsert, &before
	}
	head, err := h.log.Append(key, e)
	if err != nil {
		h.t.Fatal(err)
	}
	h.sha = e.After
	h.regs = append(h.regs, data)
	return head
}

// release records the registry at version and returns it with a
// signature by c naming the new head.
func (h *history) release(c testCurator, version string) (data, sig []byte, head auditlog.Head) {
	data = registryDoc(c.uri, version, "")
	head = h.record(c.key, data, version)
	return data, signedUntil(c, data, signedAt.Add(signature.DefaultValidity), &head), head
}

// lines returns the log's lines, each with its newline.
func (h *history) lines() [][]byte {
	h.t.Helper()
	data, err := os.ReadFile(h.path)
	if err != nil {
		h.t.Fatal(err)
	}
	return bytes.SplitAfter(data, []byte("\n"))[:bytes.Count(data, []byte("\n"))]
}

// tail is AcceptOptions.Tail reading h's log.
func (h *history) tail(after, _ int) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(bytes.Join(h.lines()[after:], nil))), nil
}

// auditServer answers GET /audit?since=N&limit=L as a 3gs node does, from
// lines (entry seq i+1 at index i), at most page entries per answer, and
// records the since of every request.
type auditServer struct {
	mu     sync.Mutex
	lines  [][]byte
	page   int
	status int // when not 0, the answer to every request
	asked  []int
}

func (a *auditServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/audit" {
		http.NotFound(w, r)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	since, err := strconv.Atoi(r.URL.Query().Get("since"))
	limit, lerr := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || lerr != nil || since < 0 || limit < 1 || limit > 1000 {
		http.Error(w, "bad since or limit", http.StatusBadRequest)
		return
	}
	a.asked = append(a.asked, since)
	if a.status != 0 {
		w.WriteHeader(a.status)
		return
	}
	n := min(limit, a.page)
	rest := a.lines[min(since, len(a.lines)):]
	if len(rest) > n {
		rest = rest[:n]
		w.Header().Set("Audit-Next", strconv.Itoa(since+n))
	}
	w.Header().Set("Content-Type", "application/jsonl")
	for _, l := range rest {
		w.Write(l)
	}
}

func (a *auditServer) set(lines [][]byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lines = lines
}

func (a *auditServer) requests() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]int(nil), a.asked...)
}

// logHarness is a harness whose peer keeps an audit log and publishes it
// at /audit, and whose network holds the copy at head seq 2.
type logHarness struct {
	*harness
	hist  *history
	audit *auditServer
	good  Peer
}

func newLogHarness(t *testing.T, tweak func(*Config)) *logHarness {
	t.Helper()
	lh := &logHarness{harness: newHarness(t, tweak), audit: &auditServer{page: 1000}}
	lh.hist = newHistory(t)
	lh.srv.answerOther(lh.audit.serve)
	lh.endorse()
	lh.hist.release(lh.peer, "1.0.0")
	data, sig, head := lh.hist.release(lh.peer, "1.0.1")
	lh.good = lh.acceptDoc(data, sig)
	if lh.good.Copy.Log == nil || *lh.good.Copy.Log != head {
		t.Fatalf("accepted copy's head %v, want %v", lh.good.Copy.Log, head)
	}
	if got := lh.audit.requests(); len(got) != 0 {
		t.Fatalf("the log was read for a first copy: %v", got)
	}
	return lh
}

// acceptDoc publishes data and sig, fetches them and checks they were
// accepted.
func (h *harness) acceptDoc(data, sig []byte) Peer {
	h.t.Helper()
	h.srv.publish(data, sig)
	h.refresh()
	p := h.only()
	if p.Status != Fresh || p.Copy == nil || !bytes.Equal(p.Copy.Registry.Bytes(), data) {
		h.t.Fatalf("status %s, reason %q; want the copy published accepted", p.Status, p.Reason)
	}
	checkWhole(h.t, p)
	return p
}

// refuseNext publishes data and sig, fetches them a minute later and
// checks they are refused with reasons while the copy held keeps serving.
func (lh *logHarness) refuseNext(data, sig []byte, reasons ...string) {
	lh.t.Helper()
	lh.srv.publish(data, sig)
	lh.clock.Add(time.Minute)
	lh.refresh()
	p := lh.only()
	wantOutcome(lh.t, p, Refused, reasons...)
	wantKept(lh.t, p, lh.good)
}

// A later copy whose published log extends the head held is accepted and
// its head remembered; the log is read only from the head held, and only
// up to the new one: entries the curator wrote since are not asked for.
func TestLogExtensionAccepted(t *testing.T) {
	lh := newLogHarness(t, nil)
	lh.acceptFourth(2, 6) // 1.0.5 and 1.0.6 written, not yet published
	// since=2 answers seqs 3 and 4 (Audit-Next 4), since=4 seqs 5 and 6:
	// seq 5 is reached, so no third page.
	if got := lh.audit.requests(); fmt.Sprint(got) != "[2 4]" {
		t.Errorf("the log was asked with since %v, want [2 4]", got)
	}

	// The same copy again reads nothing; the next is checked from seq 5.
	lh.refresh()
	wantOutcome(t, lh.only(), Fresh)
	data, sig, _ := lh.hist.release(lh.peer, "1.0.7")
	lh.audit.set(lh.hist.lines())
	lh.acceptDoc(data, sig)
	if got := lh.audit.requests(); fmt.Sprint(got) != "[2 4 5 7]" {
		t.Errorf("the log was asked with since %v, want [2 4 5 7]", got)
	}
}

// A copy without a head before: the first head is taken on the version
// rules alone, then held.
func TestLogFirstHeadRemembered(t *testing.T) {
	h := newHarness(t, nil)
	audit := &auditServer{page: 1000}
	h.srv.answerOther(audit.serve)
	h.endorse()
	h.accept("1.0.0")
	hist := newHistory(t)
	data, sig, head := hist.release(h.peer, "1.1.0")
	p := h.acceptDoc(data, sig)
	if p.Copy.Log == nil || *p.Copy.Log != head {
		t.Errorf("head %v, want %v", p.Copy.Log, head)
	}
	if len(audit.requests()) != 0 {
		t.Errorf("the log was read with no head held")
	}
}

// A signature that covers an earlier head than the one held: the log was
// rolled back, whatever the version says.
func TestLogRolledBack(t *testing.T) {
	lh := newLogHarness(t, nil)
	data := registryDoc(lh.peer.uri, "2.0.0", "")
	first := auditlog.Head{Seq: 1, Hash: auditlog.HashLine(bytes.TrimSuffix(lh.hist.lines()[0], []byte("\n")))}
	lh.refuseNext(data, signedUntil(lh.peer, data, signedAt.Add(signature.DefaultValidity), &first), "audit log rolled back", "seq 1", "seq 2")
}

// Two different logs at the same seq (a fork), or the same head over
// other bytes, are refused without reading any log.
func TestLogForkAtSameSeq(t *testing.T) {
	lh := newLogHarness(t, nil)
	other := newHistory(t)
	other.release(lh.peer, "1.0.0")
	data, sig, head := other.release(lh.peer, "2.0.0")
	if head.Seq != lh.good.Copy.Log.Seq || head.Hash == lh.good.Copy.Log.Hash {
		t.Fatalf("the fork's head %v is not another entry at seq %d", head, lh.good.Copy.Log.Seq)
	}
	lh.refuseNext(data, sig, "audit log forked at seq 2")

	data = registryDoc(lh.peer.uri, "2.0.0", "")
	lh.refuseNext(data, signedUntil(lh.peer, data, signedAt.Add(signature.DefaultValidity), lh.good.Copy.Log), "audit log seq 2 records the accepted registry", "new log entry")
	if got := lh.audit.requests(); len(got) != 0 {
		t.Errorf("the log was read for a head at the same seq: %v", got)
	}
}

// After a head, a copy whose signature covers none cannot be checked to
// extend it.
func TestLogHeadDropped(t *testing.T) {
	lh := newLogHarness(t, nil)
	lh.refuseNext(lh.peer.signed("2.0.0", ""))
	p := lh.only()
	wantOutcome(t, p, Refused, "covers no log head", "up to seq 2")
}

// A new head whose published log does not extend the head held is
// refused, naming the seq where it breaks, and the last good copy serves.
func TestLogTailRefused(t *testing.T) {
	stranger := newCurator(t)
	for _, tc := range []struct {
		name string
		// spoil turns the curator's log (seqs 1 to 5) into the one
		// published.
		spoil   func(lh *logHarness, lines [][]byte) [][]byte
		reasons []string
	}{
		{"rewritten entry", func(_ *logHarness, l [][]byte) [][]byte {
			l[3] = bytes.Replace(l[3], []byte(`"actor":"ada"`), []byte(`"actor":"eve"`), 1)
			return l
		}, []string{"seq 4:", "signature does not verify"}},
		{"entry signed by another key", func(lh *logHarness, l [][]byte) [][]byte {
			// The same history from seq 3 on, written by someone else.
			f := newHistory(t)
			f.record(lh.peer.key, lh.hist.regs[0], "1.0.0")
			f.record(lh.peer.key, lh.hist.regs[1], "1.0.1")
			for i, v := range []string{"1.0.2", "1.0.3", "1.0.4"} {
				f.record(stranger.key, lh.hist.regs[2+i], v)
			}
			return f.lines()
		}, []string{"seq 3:", "signature does not verify under the curator key"}},
		{"deleted entry", func(_ *logHarness, l [][]byte) [][]byte {
			return append(l[:3:3], l[4:]...)
		}, []string{"seq 4:", "holds seq 5"}},
		{"swapped entries", func(_ *logHarness, l [][]byte) [][]byte {
			l[2], l[3] = l[3], l[2]
			return l
		}, []string{"seq 3:", "holds seq 4"}},
		{"cut before the head", func(_ *logHarness, l [][]byte) [][]byte {
			return l[:4]
		}, []string{"seq 5:", "ends at seq 4", "missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lh := newLogHarness(t, nil)
			lh.hist.release(lh.peer, "1.0.2")
			lh.hist.release(lh.peer, "1.0.3")
			data, sig, _ := lh.hist.release(lh.peer, "1.0.4")
			lh.audit.set(tc.spoil(lh, lh.hist.lines()))
			lh.refuseNext(data, sig, append([]string{"audit log"}, tc.reasons...)...)
		})
	}
}

// A curator who forks the log below the head held and signs a later head
// of the fork: its tail does not link to the entry held.
func TestLogForkedBelowHead(t *testing.T) {
	lh := newLogHarness(t, nil)
	// The same first entry (entries are deterministic), then another
	// history from seq 2 on.
	fork := newHistory(t)
	fork.record(lh.peer.key, lh.hist.regs[0], "1.0.0")
	fork.release(lh.peer, "2.0.0")
	fork.release(lh.peer, "2.0.1")
	data, sig, head := fork.release(lh.peer, "2.0.2")
	if !bytes.Equal(fork.lines()[0], lh.hist.lines()[0]) || head.Seq != 4 {
		t.Fatalf("the fork does not share entry 1, or ends at %v", head)
	}
	lh.audit.set(fork.lines())
	lh.refuseNext(data, sig, "audit log", "does not extend the accepted copy's head (seq 2) to this copy's (seq 4)", "seq 3: prev is")
	if got := lh.audit.requests(); fmt.Sprint(got) != "[2]" {
		t.Errorf("the log was asked with since %v, want [2]", got)
	}
}

// A node that keeps no log (404) while a head is held: refused naming
// the seqs, and the last good copy still served.
func TestLogNotPublished(t *testing.T) {
	lh := newLogHarness(t, nil)
	lh.audit.status = http.StatusNotFound
	data, sig, _ := lh.hist.release(lh.peer, "1.0.2")
	lh.refuseNext(data, sig, "audit log seq 3 to 3", "HTTP 404", "publishes no audit log")
}

// staticServer serves files by path, as any web host serves a registry
// document, its signature and its log.
type staticServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
}

func newStaticServer(t *testing.T) *staticServer {
	s := &staticServer{files: map[string][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		b, ok := s.files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *staticServer) put(path string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = b
}

// A registry document's log is the whole file beside it
// (URL.audit.jsonl): the entries up to the head held are skipped, the rest
// checked the same way; a log longer than the fetcher's limit is not read
// whole but refused.
func TestLogBesideDocument(t *testing.T) {
	h := newHarness(t, nil)
	st := newStaticServer(t)
	h.net.SetEndorsements(h.own.uri, []gen.Endorsement{{Pubkey: h.peer.uri, URL: st.URL + "/reg.json", Since: "2026-11-01"}})
	hist := newHistory(t)
	publish := func(data, sig []byte) Peer {
		st.put("/reg.json", data)
		st.put("/reg.json.sig", sig)
		st.put("/reg.json.audit.jsonl", bytes.Join(hist.lines(), nil))
		h.clock.Add(time.Minute)
		h.refresh()
		return h.only()
	}
	hist.release(h.peer, "1.0.0")
	data, sig, _ := hist.release(h.peer, "1.0.1")
	good := publish(data, sig)
	wantOutcome(t, good, Fresh)

	hist.release(h.peer, "1.0.2")
	data, sig, head := hist.release(h.peer, "1.0.3")
	hist.release(h.peer, "1.0.4") // past the head: ignored
	p := publish(data, sig)
	wantOutcome(t, p, Fresh)
	if p.Copy == nil || *p.Copy.Log != head {
		t.Fatalf("the extension beside a document was not accepted with its head: %+v", p.Copy)
	}
	good = p

	// Enough entries to pass the limit before the head is reached.
	var last []byte
	for i := 0; int64(len(bytes.Join(hist.lines(), nil))) <= testMaxBytes; i++ {
		last, sig, _ = hist.release(h.peer, fmt.Sprintf("1.1.%d", i))
	}
	p = publish(last, sig)
	wantOutcome(t, p, Refused, "audit log", fmt.Sprintf("more than %d bytes", testMaxBytes))
	wantKept(t, p, good)

	// A log cut below the head held.
	st.put("/reg.json.audit.jsonl", bytes.Join(hist.lines()[:2], nil))
	h.refresh()
	wantOutcome(t, h.only(), Refused, "holds 2 entries, fewer than the seq 4 already held")
}

// The head held survives a restart: read again from the cached
// signature, it still bars a fork.
func TestLogHeadAfterRestart(t *testing.T) {
	dir := t.TempDir()
	lh := newLogHarness(t, withCache(dir))
	lh.net = lh.newNetwork(withCache(dir))
	lh.endorse()
	p := lh.only()
	if p.Copy == nil || p.Copy.Log == nil || *p.Copy.Log != *lh.good.Copy.Log {
		t.Fatalf("the cached copy's head is %v, want %v", p.Copy, lh.good.Copy.Log)
	}
	other := newHistory(t)
	other.release(lh.peer, "1.0.0")
	data, sig, _ := other.release(lh.peer, "2.0.0")
	lh.srv.publish(data, sig)
	lh.refresh()
	wantOutcome(t, lh.only(), Refused, "audit log forked at seq 2")
}

// Accept alone: a later head with no way to read the log is refused.
func TestAcceptLaterHeadNeedsTail(t *testing.T) {
	c := newCurator(t)
	key := curatorkey.Public(c.key)
	hist := newHistory(t)
	data, sig, _ := hist.release(c, "1.0.0")
	last, err := Accept(key, data, sig, &AcceptOptions{Now: signedAt})
	if err != nil {
		t.Fatal(err)
	}
	data, sig, _ = hist.release(c, "1.0.1")
	if _, err := Accept(key, data, sig, &AcceptOptions{Now: signedAt, Last: last}); err == nil || !IsRefusal(err) || !strings.Contains(err.Error(), "no way here to read the log") {
		t.Errorf("a later head without Tail: %v", err)
	}
	if _, err := Accept(key, data, sig, &AcceptOptions{Now: signedAt, Last: last, Tail: hist.tail}); err != nil {
		t.Errorf("with the log: %v", err)
	}
}

// A log tail arrives in whatever pieces its pages and connection make.
// auditlog.Verify reads it through a buffer it refills, so what it keeps
// of an entry (the registry the entry left, which the next one's before
// must name) must not change when the next piece lands in that buffer.
// When strictjson.Decode once returned strings pointing into its input,
// the entry before a refill took on bytes of a later one, and a good log
// was refused: "seq 5: before is …, but entry 4 left the registry at …".
// Read in one piece (as by hist.tail), the buffer is never refilled and
// the fault does not show; a line or a byte per read refills it at every
// entry.
func TestLogTailInPieces(t *testing.T) {
	c := newCurator(t)
	key := curatorkey.Public(c.key)
	hist := newHistory(t)
	hist.release(c, "1.0.0")
	data, sig, _ := hist.release(c, "1.0.1")
	last, err := Accept(key, data, sig, &AcceptOptions{Now: signedAt})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1.0.2", "1.0.3", "1.0.4"} {
		hist.release(c, v)
	}
	data, sig, head := hist.release(c, "1.0.5")
	hist.release(c, "1.0.6") // past the head
	for _, tc := range []struct {
		name  string
		split func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"a line per read", func(r io.Reader) io.Reader { return &lineReader{r: r} }},
		{"half a read", iotest.HalfReader},
		{"a byte per read", iotest.OneByteReader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tail := func(after, until int) (io.ReadCloser, error) {
				r, err := hist.tail(after, until)
				return io.NopCloser(tc.split(r)), err
			}
			got, err := Accept(key, data, sig, &AcceptOptions{Now: signedAt, Last: last, Tail: tail})
			if err != nil {
				t.Fatalf("a good log read in pieces: %v", err)
			}
			if got.Log == nil || *got.Log != head {
				t.Errorf("head %v, want %v", got.Log, head)
			}
		})
	}
}

// lineReader hands out r one line per Read at most.
type lineReader struct {
	r    io.Reader
	rest []byte
	done bool
}

func (l *lineReader) Read(p []byte) (int, error) {
	if !l.done {
		b, err := io.ReadAll(l.r)
		if err != nil {
			return 0, err
		}
		l.rest, l.done = b, true
	}
	if len(l.rest) == 0 {
		return 0, io.EOF
	}
	n := bytes.IndexByte(l.rest, '\n') + 1
	if n == 0 {
		n = len(l.rest)
	}
	n = copy(p, l.rest[:n])
	l.rest = l.rest[n:]
	return n, nil
}

// A node's pages of one entry each: every page lands in Verify's buffer
// over the entry before it, and the log is still accepted, read from the
// head held up to the new one and no further.
func TestLogExtensionOnePerPage(t *testing.T) {
	lh := newLogHarness(t, nil)
	lh.acceptFourth(1, 5)
	// since=4 answers seq 5 with Audit-Next 5: the head is reached.
	if got := lh.audit.requests(); fmt.Sprint(got) != "[2 3 4]" {
		t.Errorf("the log was asked with since %v, want [2 3 4]", got)
	}
}

// acceptFourth has the curator release versions 1.0.2 to 1.0.last, its
// log served page entries at a time, and the node accept 1.0.4 and
// remember its head.
func (lh *logHarness) acceptFourth(page, last int) {
	lh.t.Helper()
	lh.audit.page = page
	var data, sig []byte
	var head auditlog.Head
	for v := 2; v <= last; v++ {
		d, s, h := lh.hist.release(lh.peer, fmt.Sprintf("1.0.%d", v))
		if v == 4 {
			data, sig, head = d, s, h
		}
	}
	lh.audit.set(lh.hist.lines())
	if p := lh.acceptDoc(data, sig); p.Copy.Log == nil || *p.Copy.Log != head {
		lh.t.Fatalf("head remembered %v, want %v", p.Copy.Log, head)
	}
}
