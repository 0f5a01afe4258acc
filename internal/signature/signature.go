// Package signature signs and verifies registry files. A signature is a
// small JSON document (schema/signature.schema.json) kept next to the
// registry as registry.json.sig: an Ed25519 signature, made with the
// standard library, over the exact bytes of the file, together with the
// signer's PKARR key, the SHA-256 of those bytes and the signing time.
//
// Ed25519 signs the bytes themselves, not a digest of them, so anyone can
// check a registry with stock tools (sha256sum, base64, openssl); see
// Instructions.
package signature

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"

	"github.com/three-good-sources/3gs/internal/strictjson"
)

// Suffix is appended to a registry's path to name its signature file.
const Suffix = ".sig"

// MaxSize bounds a signature file; a real one is under 300 bytes.
const MaxSize = 4096

// The reasons a signature fails, for errors.Is. Each error returned by this
// package wraps one of them and says precisely what was found.
var (
	// ErrMalformed: the signature file is not a signature document.
	ErrMalformed = errors.New("malformed signature file")
	// ErrDigest: the bytes are not the ones that were signed.
	ErrDigest = errors.New("registry bytes changed since signing")
	// ErrWrongKey: the signature was made by another key than expected.
	ErrWrongKey = errors.New("signed by a different key")
	// ErrBadSignature: the digest matches but the signature does not
	// verify, so the signature or its document was altered.
	ErrBadSignature = errors.New("signature does not verify")
	// ErrNotCurator: a valid signature, but not by the key the registry
	// names as its curator's.
	ErrNotCurator = errors.New("signer is not the registry's curator")
)

// DefaultValidity is how long a signature vouches for a registry unless
// told otherwise (3gs sign --expires): long enough for a curator who edits
// monthly, short enough that a frozen copy is refused within weeks.
const DefaultValidity = 30 * 24 * time.Hour

// Options are what a signature covers besides the registry's digest.
type Options struct {
	// Expires, when not zero, is when the signature stops vouching for
	// the registry; the signature then covers it and Log (statement).
	Expires time.Time
	// Log, when set, is the head of the audit log that recorded the
	// registry.
	Log *auditlog.Head
	// Header opens the statement signed with an expiry; empty means
	// StatementHeader, a registry's. Another document the curator's key
	// signs (HealthHeader) has a header of its own, so that no signature
	// made for one kind of document verifies as one of another.
	Header string
}

// Sign returns a signature document for data, made with key at time now,
// that expires after DefaultValidity and covers no log head.
func Sign(data []byte, key ed25519.PrivateKey, now time.Time) []byte {
	return SignWith(data, key, now, Options{Expires: now.Add(DefaultValidity)})
}

// SignWith returns the signature document for data made with key at time
// now. With o.Expires set it signs the statement that names the digest,
// the expiry and the log head; without, the bytes themselves (the form of
// 3gs before signatures expired, kept for tests of that form).
func SignWith(data []byte, key ed25519.PrivateKey, now time.Time, o Options) []byte {
	sum := sha256.Sum256(data)
	doc := gen.Signature{
		Algorithm:    gen.SignatureAlgorithmEd25519,
		Pubkey:       curatorkey.Encode(curatorkey.Public(key)),
		SignedSHA256: hex.EncodeToString(sum[:]),
		SignedAt:     now.UTC().Truncate(time.Second),
	}
	msg := data
	if !o.Expires.IsZero() {
		exp := o.Expires.UTC().Truncate(time.Second)
		doc.Expires = &exp
		if o.Log != nil {
			seq, head := o.Log.Seq, o.Log.Hash
			doc.LogSeq, doc.LogHead = &seq, &head
		}
		msg = statement(o.Header, &doc)
	}
	doc.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))
	return gen.EncodeSignature(&doc)
}

// StatementHeader opens the text a registry's signature with an expiry
// signs; HealthHeader the text a source health file's signature signs.
const (
	StatementHeader = "3gs registry signature v2\n"
	HealthHeader    = "3gs source health signature v1\n"
)

// Statement is the message a signature document with an expiry signs:
// one line each for the registry's digest, the expiry and, when the
// document names one, the audit log head. It is plain text so anyone can
// rebuild it with printf or jq and check the signature with openssl
// (Instructions). Only call it on a document with Expires set.
func Statement(doc *gen.Signature) []byte { return statement(StatementHeader, doc) }

// statement is Statement opened by header (StatementHeader when empty).
func statement(header string, doc *gen.Signature) []byte {
	if header == "" {
		header = StatementHeader
	}
	// The schema's pattern holds expires to one spelling (UTC, to the
	// second), which this formatting gives back: the statement names the
	// expiry exactly as the document wrote it.
	s := header + "sha256 " + doc.SignedSHA256 + "\nexpires " + doc.Expires.UTC().Format(time.RFC3339) + "\n"
	if doc.LogSeq != nil && doc.LogHead != nil {
		s += "log " + strconv.Itoa(*doc.LogSeq) + " " + *doc.LogHead + "\n"
	}
	return []byte(s)
}

// Verified describes a signature that checked out.
type Verified struct {
	Signer   ed25519.PublicKey
	SignedAt time.Time
	SHA256   string
	// Expires is when the signature stops vouching for the registry;
	// zero for a signature of the older form, which never expires.
	Expires time.Time
	// Log is the audit log head the signature covers, or nil.
	Log *auditlog.Head
}

// Expired says whether a signature that expires at exp is past it at now;
// one that never expires (zero) is not.
func Expired(exp, now time.Time) bool { return !exp.IsZero() && !now.Before(exp) }

// Parse strictly decodes a signature document.
func Parse(doc []byte) (*gen.Signature, error) {
	if len(doc) > MaxSize {
		return nil, fmt.Errorf("%w: %d bytes, more than the %d a signature document can need", ErrMalformed, len(doc), MaxSize)
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrMalformed)
	}
	sig, err := gen.DecodeSignature(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, strictjson.WithPosition(err, doc))
	}
	// The schema cannot say that these go together; an expiry alone is a
	// statement without a log, a log head needs both its halves and an
	// expiry (only a statement can carry it).
	if (sig.LogSeq == nil) != (sig.LogHead == nil) {
		return nil, fmt.Errorf("%w: log_seq and log_head come together, and only one is present", ErrMalformed)
	}
	if sig.LogSeq != nil && sig.Expires == nil {
		return nil, fmt.Errorf("%w: log_seq and log_head are signed only with expires, which is absent", ErrMalformed)
	}
	return sig, nil
}

// expiry is a document's expires, zero when absent.
func expiry(sig *gen.Signature) time.Time {
	if sig.Expires == nil {
		return time.Time{}
	}
	return *sig.Expires
}

// Verify checks that doc is a valid signature of data. With a non-nil
// trusted key, the signature must also be by that key. The checks run from
// the cheapest and most telling to the cryptographic one, so the error
// names the first thing that is wrong: the document, the digest, the key,
// then the signature itself.
func Verify(data, doc []byte, trusted ed25519.PublicKey) (*Verified, error) {
	return VerifyDigest(data, Digest(data), doc, trusted)
}

// Digest is the lowercase hex SHA-256 of data, as signed_sha256 and
// registry.Registry.SHA256 write it.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// VerifyDigest is Verify for a caller that has hashed data already
// (digest, as Digest writes it): a 150 MB registry is hashed once, not once
// per check.
func VerifyDigest(data []byte, digest string, doc []byte, trusted ed25519.PublicKey) (*Verified, error) {
	return verify(data, digest, doc, trusted, StatementHeader)
}

// VerifyHealth is Verify for a source health file (HealthHeader). Only a
// signature with an expiry is accepted: a health file says what was true
// when it was checked, and a copy that never expires could be replayed
// long after its sources died.
func VerifyHealth(data, doc []byte, trusted ed25519.PublicKey) (*Verified, error) {
	v, err := verify(data, Digest(data), doc, trusted, HealthHeader)
	if err == nil && v.Expires.IsZero() {
		return nil, fmt.Errorf("%w: a source health signature must name an expiry (expires), and this one does not", ErrMalformed)
	}
	return v, err
}

func verify(data []byte, digest string, doc []byte, trusted ed25519.PublicKey, header string) (*Verified, error) {
	sig, err := Parse(doc)
	if err != nil {
		return nil, err
	}
	signer, err := curatorkey.ParsePublicKey(sig.Pubkey)
	if err != nil {
		return nil, fmt.Errorf("%w: pubkey %s", ErrMalformed, err)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(sig.Signature)
	if err != nil || len(raw) != ed25519.SignatureSize {
		return nil, fmt.Errorf("%w: signature is not %d bytes of standard base64", ErrMalformed, ed25519.SignatureSize)
	}
	exp := expiry(sig)
	if have := digest; have != sig.SignedSHA256 {
		return nil, fmt.Errorf("%w: the registry's SHA-256 is %s, but the signature covers %s", ErrDigest, have, sig.SignedSHA256)
	}
	if trusted != nil && !trusted.Equal(signer) {
		return nil, fmt.Errorf("%w: the signature is by %s, not by the expected %s", ErrWrongKey, curatorkey.Encode(signer), curatorkey.Encode(trusted))
	}
	msg, over := data, "them"
	if sig.Expires != nil {
		msg, over = statement(header, sig), "the statement of digest, expiry and log head"
	}
	if !ed25519.Verify(signer, msg, raw) {
		return nil, fmt.Errorf("%w: the bytes match signed_sha256, but the signature is not valid for %s under %s; the signature file was altered", ErrBadSignature, over, curatorkey.Encode(signer))
	}
	v := &Verified{Signer: signer, SignedAt: sig.SignedAt, SHA256: sig.SignedSHA256, Expires: exp}
	if sig.LogSeq != nil {
		v.Log = &auditlog.Head{Seq: *sig.LogSeq, Hash: *sig.LogHead}
	}
	return v, nil
}

// CheckCurator returns an error unless signer is the curator reg names.
func CheckCurator(reg *registry.Registry, signer ed25519.PublicKey) error {
	cur, ok := reg.CuratorKey()
	switch {
	case !ok:
		return fmt.Errorf("%w: the registry's curator.pubkey is %s, so no key can sign for its curator; set it to %q", ErrNotCurator, registry.Placeholder, curatorkey.URI(signer))
	case !cur.Equal(signer):
		return fmt.Errorf("%w: the signature is by %s, but curator.pubkey in the registry is %s", ErrNotCurator, curatorkey.URI(signer), reg.Curator().Pubkey)
	}
	return nil
}

// Status is what is known about the signature of a served registry.
type Status struct {
	// Document is the signature file's content; nil when there is none.
	Document []byte
	// Verified is set when Document verifies the registry's bytes under
	// the curator's key.
	Verified bool
	// Signer and SignedAt come from a document that could be read.
	Signer   ed25519.PublicKey
	SignedAt time.Time
	// Expires and Log come from a document that verified: when it stops
	// vouching (zero: never, the older form) and the audit log head it
	// covers (nil: none).
	Expires time.Time
	Log     *auditlog.Head
	// Problem says why a present document does not verify.
	Problem error
	// Expired is set by At for a signature that verified but whose expiry
	// has passed: Verified is then false and Problem says when it expired.
	Expired bool
}

// ErrExpired is wrapped by the Problem At sets for a signature past its
// expiry.
var ErrExpired = errors.New("the signature has expired")

// At is s as judged at now: a signature that verified but whose expiry
// has passed no longer vouches for the registry, so Verified is false,
// Expired true and Problem names the date. A signature in force, one that
// never expires and one that does not verify are returned unchanged.
// Expires is kept, so a report can still say when it expired.
func (s Status) At(now time.Time) Status {
	if s.Verified && Expired(s.Expires, now) {
		s.Verified, s.Expired = false, true
		s.Problem = fmt.Errorf("%w: it expired at %s", ErrExpired, s.Expires.UTC().Format(time.RFC3339))
	}
	return s
}

// Signed reports whether a signature document accompanies the registry.
func (s Status) Signed() bool { return s.Document != nil }

// ErrMissing is Status.Refuse's reason for a registry that names a real
// curator key and comes without a signature file.
var ErrMissing = errors.New("the registry names a curator key but has no signature file, so nothing shows the curator wrote it")

// Refuse says why 3gs must not serve reg with this signature status
// unless told to (--allow-unsigned), or nil when it may. A signature that
// does not verify is refused, and so is a missing one when the registry
// names a real curator key: deleting registry.json.sig must not turn a
// tampered registry into a served one. Only a registry whose key is still
// the placeholder, which cannot be signed, is served unsigned.
func (s Status) Refuse(reg *registry.Registry) error {
	switch {
	case s.Verified:
		return nil
	case s.Signed():
		return s.Problem
	}
	if _, named := reg.CuratorKey(); named {
		return ErrMissing
	}
	return nil
}

// Check verifies doc (nil when there is no signature file) against the
// registry's bytes and its curator's key.
func Check(reg *registry.Registry, doc []byte) Status {
	st := Status{Document: doc}
	if doc == nil {
		return st
	}
	if sig, err := Parse(doc); err == nil {
		st.SignedAt = sig.SignedAt
		st.Signer, _ = curatorkey.ParsePublicKey(sig.Pubkey)
	}
	v, err := VerifyDigest(reg.Bytes(), reg.SHA256(), doc, nil)
	if err == nil {
		st.Expires, st.Log = v.Expires, v.Log
		err = CheckCurator(reg, v.Signer)
	}
	st.Problem = err
	st.Verified = err == nil
	return st
}

// ErrStale is wrapped by Status.Stale's errors.
var ErrStale = errors.New("the signature no longer vouches for the registry")

// Stale says why a verified signature must not be trusted at now: it has
// expired, or it never expires (the older form, which an old copy put
// back could carry forever). Both are what a freeze or rollback attack
// replays, so a registry file with either is refused unless the operator
// allows it (--allow-expired). Nil for a signature in force, or one that
// does not verify (Refuse's business).
func (s Status) Stale(now time.Time) error {
	switch {
	case !s.Verified:
		return nil
	case s.Expires.IsZero():
		return fmt.Errorf("%w: it never expires (signed by a 3gs from before signatures expired), so an old copy signed that way would be accepted forever", ErrStale)
	case Expired(s.Expires, now):
		return fmt.Errorf("%w: it expired on %s (an old signed copy put back looks exactly like this)", ErrStale, s.Expires.UTC().Format(time.RFC3339))
	}
	return nil
}
