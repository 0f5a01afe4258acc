package peer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/signature"
)

// An older valid signature for the same bytes and audit log head does not
// replace the newer, longer-lived one held: Accept refuses it as a
// rollback, naming both times; the same signature again, or a later one,
// is accepted.
func TestOlderSignatureRefused(t *testing.T) {
	c := newCurator(t)
	key := pkarrKey(t, c.uri)
	data := registryDoc(c.uri, "1.0.0", "")
	head := &auditlog.Head{Seq: 4, Hash: strings.Repeat("ab", 32)}
	older := signature.SignWith(data, c.key, signedAt, signature.Options{Expires: signedAt.Add(24 * time.Hour), Log: head})
	newer := signature.SignWith(data, c.key, signedAt.Add(time.Hour), signature.Options{Expires: signedAt.Add(30 * 24 * time.Hour), Log: head})
	now := signedAt.Add(2 * time.Hour)
	held, err := Accept(key, data, newer, &AcceptOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Accept(key, data, older, &AcceptOptions{Now: now, Last: held})
	if !IsRefusal(err) || !strings.Contains(err.Error(), "rollback: the signature was made at 2026-11-15T12:00:00Z, before the one accepted (made at 2026-11-15T13:00:00Z)") {
		t.Errorf("an older signature for the same bytes and head: %v, want a rollback refusal", err)
	}
	if _, err := Accept(key, data, newer, &AcceptOptions{Now: now, Last: held}); err != nil {
		t.Errorf("the same signature again: %v", err)
	}
	later := signature.SignWith(data, c.key, signedAt.Add(90*time.Minute), signature.Options{Expires: signedAt.Add(31 * 24 * time.Hour), Log: head})
	if _, err := Accept(key, data, later, &AcceptOptions{Now: now, Last: held}); err != nil {
		t.Errorf("a later signature: %v", err)
	}
}

// Through the network: a peer that goes back to serving the older
// signature is refused, and the newer copy stays held and served, in
// memory and in the cache a restart reads.
func TestPeerOlderSignatureKeepsNewer(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, func(c *Config) { c.CacheDir = dir })
	h.endorse()
	data := registryDoc(h.peer.uri, "1.0.0", "")
	older := signatureAt(h.peer, data, signedAt)
	newer := signatureAt(h.peer, data, signedAt.Add(time.Hour))
	h.srv.publish(data, newer)
	h.refresh()
	wantOutcome(t, h.only(), Fresh)

	h.srv.publish(data, older)
	h.clock.Add(time.Minute)
	h.refresh()
	p := h.only()
	wantOutcome(t, p, Refused, "rollback: the signature was made at")
	if p.Copy == nil || !bytes.Equal(p.Copy.Signature, newer) {
		t.Errorf("the held copy's signature was replaced by the older one")
	}
	cached, err := loadCopy(dir, h.peer.uri, pkarrKey(t, h.peer.uri), testMaxBytes, h.clock.Now())
	if err != nil || cached == nil || !bytes.Equal(cached.Signature, newer) {
		t.Errorf("the cache holds another signature than the newer one: %v", err)
	}
}
