package peer

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/fetch"
)

func TestAccepted(t *testing.T) {
	h := newHarness(t, nil)
	h.endorse()
	p := h.only()
	wantOutcome(t, p, Pending)
	if p.Copy != nil || p.Matcher != nil || !p.LastAttempt.IsZero() {
		t.Fatalf("before any fetch: %+v, want no copy, no matcher, no attempt", p)
	}

	data, sig := h.peer.signed("1.0.0", "")
	h.srv.publish(data, sig)
	h.refresh()
	p = h.only()
	wantOutcome(t, p, Fresh)
	checkWhole(t, p)
	if p.Copy == nil {
		t.Fatal("no copy after an accepted fetch")
	}
	if !bytes.Equal(p.Copy.Registry.Bytes(), data) || !bytes.Equal(p.Copy.Signature, sig) {
		t.Errorf("the copy does not hold the bytes served")
	}
	if p.Copy.URL != h.srv.URL {
		t.Errorf("copy URL %q, want the endorsement's %q", p.Copy.URL, h.srv.URL)
	}
	now := h.clock.Now()
	if !p.Copy.FetchedAt.Equal(now) || !p.LastAttempt.Equal(now) {
		t.Errorf("FetchedAt %v, LastAttempt %v; want both %v", p.Copy.FetchedAt, p.LastAttempt, now)
	}
	if h.builds.Load() != 1 {
		t.Errorf("%d matchers built, want 1", h.builds.Load())
	}
	if got, err := p.Matcher.Match("how do I undo a git commit", 3); err != nil || len(got) == 0 || got[0].Slug != "git-version-control" {
		t.Errorf("the peer's matcher answers %v, %v", got, err)
	}

	// A newer version replaces the copy and gets its own matcher.
	p = h.accept("1.1.0")
	if h.builds.Load() != 2 {
		t.Errorf("%d matchers built after a new version, want 2", h.builds.Load())
	}
}

// A registry that names the endorsed key as its curator but is signed by
// another key.
func TestRefusedSignedByAnotherKey(t *testing.T) {
	h := newHarness(t, nil)
	stranger := newCurator(t)
	p := acceptThenFail(t, h, func(h *harness) {
		data := registryDoc(h.peer.uri, "2.0.0", "")
		h.srv.publish(data, stranger.sign(data))
	}, Refused, "signature: ", "signed by a different key")
	wantPublic(t, p, RefusedSignature)
}

// A registry consistent in itself, naming and signed by a key of its own:
// the key endorsed is the only one that counts.
func TestRefusedPeerNamesItsOwnKey(t *testing.T) {
	h := newHarness(t, nil)
	stranger := newCurator(t)
	p := acceptThenFail(t, h, func(h *harness) {
		h.srv.publish(stranger.signed("2.0.0", ""))
	}, Refused, "signed by a different key", strings.TrimPrefix(h.peer.uri, "pk:"))
	wantPublic(t, p, RefusedSignature)
}

// Signed by the endorsed key, but naming another curator: the registry is
// not the endorsed curator's.
func TestRefusedCuratorIsNotTheSigner(t *testing.T) {
	h := newHarness(t, nil)
	stranger := newCurator(t)
	p := acceptThenFail(t, h, func(h *harness) {
		data := registryDoc(stranger.uri, "2.0.0", "")
		h.srv.publish(data, h.peer.sign(data))
	}, Refused, "signer is not the registry's curator", stranger.uri)
	wantPublic(t, p, RefusedSignature)
}

// The signature document altered after signing.
func TestRefusedAlteredSignature(t *testing.T) {
	h := newHarness(t, nil)
	p := acceptThenFail(t, h, func(h *harness) {
		data := registryDoc(h.peer.uri, "2.0.0", "")
		h.srv.publish(data, []byte("not a signature document"))
	}, Refused, "signature: ", "malformed signature file")
	wantPublic(t, p, RefusedSignature)
}

// A validly signed older version: a rollback to a registry the curator
// has since replaced.
func TestRefusedRollback(t *testing.T) {
	h := newHarness(t, nil)
	p := acceptThenFail(t, h, func(h *harness) {
		h.srv.publish(h.peer.signed("0.9.0", ""))
	}, Refused, "rollback", "0.9.0", "1.0.0")
	wantPublic(t, p, RefusedRollback)
}

// The same version with different content, validly signed.
func TestRefusedSameVersionOtherContent(t *testing.T) {
	h := newHarness(t, nil)
	p := acceptThenFail(t, h, func(h *harness) {
		h.srv.publish(h.peer.signed("1.0.0", " and more"))
	}, Refused, "version 1.0.0 again with different content")
	wantPublic(t, p, RefusedRollback)
}

func TestRefusedOverMaxBytes(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Fix = func(err error) string {
			if r := (*Refusal)(nil); errors.As(err, &r) && r.MaxBytes > 0 {
				return fmt.Sprintf("raise the limit of %d bytes", r.MaxBytes)
			}
			return ""
		}
	})
	acceptThenFail(t, h, func(h *harness) {
		// Valid JSON, validly signed, one byte over the limit: only the
		// size is wrong.
		data := registryDoc(h.peer.uri, "2.0.0", "")
		data = append(data, bytes.Repeat([]byte(" "), testMaxBytes+1-len(data))...)
		h.srv.publish(data, h.peer.sign(data))
	}, Refused, fmt.Sprintf("over the %d-byte limit", testMaxBytes), fmt.Sprintf("; raise the limit of %d bytes", testMaxBytes))
	if p := h.only(); p.Public != fetch.RefusedTooLarge {
		t.Errorf("public reason %q, want %q", p.Public, fetch.RefusedTooLarge)
	}
}

// A body that never ends is cut off by Fetcher.Timeout: a TimeoutError
// naming it, which the caller's Fix can word with its flag.
func TestUnreachableBodyNeverEnds(t *testing.T) {
	const timeout = 300 * time.Millisecond
	h := newHarness(t, func(c *Config) {
		c.Fetcher = NewFetcher(testMaxBytes, timeout).AsOperator(true)
		c.Fix = func(err error) string {
			if te := (*TimeoutError)(nil); errors.As(err, &te) && errors.Is(err, context.DeadlineExceeded) {
				return fmt.Sprintf("allow more than %s", te.Timeout)
			}
			return ""
		}
	})
	acceptThenFail(t, h, func(h *harness) {
		h.srv.answer(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("{"))
			w.(http.Flusher).Flush()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
					if _, err := w.Write([]byte(" ")); err != nil {
						return
					}
					w.(http.Flusher).Flush()
				}
			}
		})
	}, Unreachable, "registry "+h.srv.URL+"/registry", "no complete answer in time", "the whole fetch may take 300ms", "; allow more than 300ms")
}

// A server that answers only after the timeout.
func TestUnreachableAnswerTooLate(t *testing.T) {
	const timeout = 300 * time.Millisecond
	h := newHarness(t, func(c *Config) { c.Fetcher = NewFetcher(testMaxBytes, timeout).AsOperator(true) })
	p := acceptThenFail(t, h, func(h *harness) {
		h.srv.answer(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Minute):
			}
			w.Write(registryDoc(h.peer.uri, "2.0.0", ""))
		})
	}, Unreachable, "registry "+h.srv.URL+"/registry")
	// The whole-fetch deadline and the transport's header timeout are the
	// same length; whichever fires first, the reason must say it timed out.
	if !strings.Contains(p.Reason, "no complete answer in time") && !strings.Contains(p.Reason, "timeout awaiting response headers") {
		t.Errorf("reason %q does not say the peer took too long", p.Reason)
	}
}

// A redirect is followed only to the same scheme.
func TestRefusedRedirectToOtherScheme(t *testing.T) {
	for _, target := range []string{"ftp://peer.example/registry.json", "file:///etc/passwd"} {
		t.Run(strings.SplitN(target, ":", 2)[0], func(t *testing.T) {
			h := newHarness(t, nil)
			acceptThenFail(t, h, func(h *harness) {
				h.srv.answer(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, target, http.StatusFound)
				})
			}, Refused, "to "+target, "only to the same scheme, host and port")
			if p := h.only(); p.Public != fetch.RefusedRedirect {
				t.Errorf("public reason %q, want %q", p.Public, fetch.RefusedRedirect)
			}
		})
	}
}

// A redirect to another host is refused: a peer must not be able to make
// us ask other machines (our own network among them) and read the outcome
// in get_endorsements. localhost and 127.0.0.1 are the same machine but
// another host name, which is all the rule looks at.
func TestRefusedRedirectToOtherHost(t *testing.T) {
	h := newHarness(t, nil)
	other := newPeerServer(t)
	target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/registry"
	acceptThenFail(t, h, func(h *harness) {
		h.srv.answer(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target, http.StatusFound)
		})
	}, Refused, "to "+target, "only to the same scheme, host and port")
	if reg, _, _ := other.counts(); reg != 0 {
		t.Errorf("the other host was asked %d times", reg)
	}
}

// A redirect to the same scheme, host and port is followed, to a
// registry that is then checked like any other.
func TestRedirectFollowed(t *testing.T) {
	h := newHarness(t, nil)
	h.endorse()
	h.accept("1.0.0")
	data, sig := h.peer.signed("1.1.0", "")
	h.srv.publish(data, sig)
	var moved atomic.Int32
	h.srv.answer(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" {
			http.Redirect(w, r, "/registry?moved=1", http.StatusFound)
			return
		}
		moved.Add(1)
		w.Write(data)
	})
	h.refresh()
	p := h.only()
	wantOutcome(t, p, Fresh)
	if got := p.Copy.Registry.Version(); got != "1.1.0" {
		t.Errorf("version %s after the redirect, want 1.1.0", got)
	}
	if moved.Load() != 1 {
		t.Errorf("the redirect target was asked %d times, want 1", moved.Load())
	}
}

// Validly signed bytes that are not a registry.
func TestRefusedInvalidJSON(t *testing.T) {
	h := newHarness(t, nil)
	p := acceptThenFail(t, h, func(h *harness) {
		data := []byte(`{"version": "2.0.0", "curator": `)
		h.srv.publish(data, h.peer.sign(data))
	}, Refused, "registry: ")
	wantPublic(t, p, RefusedInvalid)
}

// Valid JSON, validly signed, that fails the registry's own rules.
func TestRefusedInvalidRegistry(t *testing.T) {
	h := newHarness(t, nil)
	p := acceptThenFail(t, h, func(h *harness) {
		data := bytes.Replace(registryDoc(h.peer.uri, "2.0.0", ""), []byte(`"rank": 3`), []byte(`"rank": 2`), 1)
		h.srv.publish(data, h.peer.sign(data))
	}, Refused, "registry: ")
	wantPublic(t, p, RefusedInvalid)
}

func TestUnreachableHTTP500(t *testing.T) {
	h := newHarness(t, nil)
	p := acceptThenFail(t, h, func(h *harness) {
		h.srv.answer(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "oops", http.StatusInternalServerError)
		})
	}, Unreachable, "registry "+h.srv.URL+"/registry: HTTP 500")
	wantPublic(t, p, fetch.Unreachable)
}

func TestRefusedSignatureMissing(t *testing.T) {
	h := newHarness(t, nil)
	p := acceptThenFail(t, h, func(h *harness) {
		h.srv.publish(registryDoc(h.peer.uri, "2.0.0", ""), nil)
	}, Refused, "signature "+h.srv.URL+"/registry.sig: HTTP 404", "publishes no signature", "3gs sign")
	wantPublic(t, p, RefusedSignature)
}

func TestUnreachableServerDown(t *testing.T) {
	h := newHarness(t, nil)
	p := acceptThenFail(t, h, func(h *harness) {
		h.srv.Close()
	}, Unreachable, "registry "+h.srv.URL+"/registry: ", "connect")
	wantPublic(t, p, fetch.Unreachable)
}

// A peer that sends an ETag is asked with If-None-Match; its 304 keeps
// the copy, registry and matcher, with a new fetch time, and costs no
// signature fetch.
func TestNotModified(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.setETag(`"v1"`)
	h.endorse()
	good := h.accept("1.0.0")
	if good.Copy.ETag != `"v1"` {
		t.Fatalf("copy ETag %q, want the server's", good.Copy.ETag)
	}
	_, _, inm := h.srv.counts()
	if inm != "" {
		t.Errorf("the first fetch sent If-None-Match %q", inm)
	}

	later := h.clock.Add(time.Hour)
	h.refresh()
	p := h.only()
	wantOutcome(t, p, Fresh)
	reg, sig, inm := h.srv.counts()
	if inm != `"v1"` {
		t.Errorf("If-None-Match %q, want the ETag sent", inm)
	}
	if reg != 2 || sig != 1 {
		t.Errorf("%d registry and %d signature requests, want 2 and 1", reg, sig)
	}
	if p.Copy.Registry != good.Copy.Registry || p.Matcher != good.Matcher {
		t.Errorf("a 304 replaced the registry or the matcher")
	}
	if !p.Copy.FetchedAt.Equal(later) {
		t.Errorf("FetchedAt %v after the 304, want %v", p.Copy.FetchedAt, later)
	}
	if !good.Copy.FetchedAt.Equal(later.Add(-time.Hour)) {
		t.Errorf("the earlier snapshot's copy changed: FetchedAt %v", good.Copy.FetchedAt)
	}
	if h.builds.Load() != 1 {
		t.Errorf("%d matchers built, want 1", h.builds.Load())
	}
	checkWhole(t, p)
}

// A peer that sends no ETag answers 200 with the same bytes every time:
// the registry and its matcher are kept, not built again.
func TestSameBytesReuseMatcher(t *testing.T) {
	h := newHarness(t, nil)
	h.endorse()
	good := h.accept("1.0.0")
	// The same bytes signed again later: a new signature document, the
	// same registry.
	data := good.Copy.Registry.Bytes()
	h.srv.publish(data, signatureAt(h.peer, data, signedAt.Add(time.Hour)))
	later := h.clock.Add(time.Hour)
	h.refresh()
	p := h.only()
	wantOutcome(t, p, Fresh)
	if reg, sig, _ := h.srv.counts(); reg != 2 || sig != 2 {
		t.Fatalf("%d registry and %d signature requests, want 2 and 2", reg, sig)
	}
	if n := h.builds.Load(); n != 1 {
		t.Errorf("%d matchers built for one version, want 1", n)
	}
	if p.Copy.Registry != good.Copy.Registry || p.Matcher != good.Matcher {
		t.Errorf("identical bytes replaced the registry or the matcher")
	}
	if !p.Copy.FetchedAt.Equal(later) {
		t.Errorf("FetchedAt %v, want %v", p.Copy.FetchedAt, later)
	}
	if bytes.Equal(p.Copy.Signature, good.Copy.Signature) {
		t.Errorf("the copy kept the old signature document, not the one served")
	}
	checkWhole(t, p)

	// The next version is signed later than the re-signed copy: an
	// earlier signature would be refused (signedNoEarlier).
	next := registryDoc(h.peer.uri, "1.0.1", "")
	h.srv.publish(next, signatureAt(h.peer, next, signedAt.Add(2*time.Hour)))
	h.clock.Add(time.Hour)
	h.refresh()
	wantOutcome(t, h.only(), Fresh)
	if n := h.builds.Load(); n != 2 {
		t.Errorf("%d matchers built after a new version, want 2", n)
	}
}

// A 3gs node sends the signature with the registry (Registry-Signature),
// so a registry published between the two requests of a fetch cannot be
// paired with the other version's signature: the header is used, and the
// separate signature URL, here serving the next version's, is not asked.
func TestInlineSignature(t *testing.T) {
	h := newHarness(t, nil)
	reg, sig := h.peer.signed("1.0.0", "")
	_, nextSig := h.peer.signed("1.0.1", "")
	h.srv.publish(reg, nextSig)
	h.srv.answer(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Registry-Signature", base64.StdEncoding.EncodeToString(sig))
		w.Write(reg)
	})
	h.endorse()
	h.refresh()
	p := h.only()
	if p.Status != Fresh || p.Copy == nil || p.Copy.Registry.Version() != "1.0.0" {
		t.Fatalf("status %s, reason %q; want the registry accepted with its inline signature", p.Status, p.Reason)
	}
	if _, sigHits, _ := h.srv.counts(); sigHits != 0 {
		t.Errorf("the signature URL was asked %d times; the inline signature should have been used", sigHits)
	}
	// Without the header, the separate signature (the next version's) is
	// read, and does not verify these bytes.
	h.srv.publish(reg, nextSig)
	h.refresh()
	if p := h.only(); p.Status != Refused || !strings.Contains(p.Reason, "signature") {
		t.Errorf("mismatched separate signature: status %s, reason %q", p.Status, p.Reason)
	}
}
