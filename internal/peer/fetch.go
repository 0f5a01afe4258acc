package peer

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// Copy is an accepted peer registry. It is immutable: a newer version or
// a refreshed fetch time makes a new Copy.
type Copy struct {
	// URL is the endorsement's url it was fetched from.
	URL       string
	Registry  *registry.Registry
	Signature []byte
	// ETag is the peer's validator for the registry ("" when it sent
	// none), sent back as If-None-Match.
	ETag string
	// FetchedAt is when the peer last served this copy, or answered that
	// it had not changed.
	FetchedAt time.Time
	// Expires is when the signature stops vouching for the copy; zero for
	// a signature of the form before expiry, which never does.
	Expires time.Time
	// Log is the head of the curator's audit log the signature covers,
	// nil for none. Once a copy names one, every later copy's log must
	// extend it.
	Log *auditlog.Head
	// signedAt is when the signature was made (zero if unreadable); with
	// Expires it says when a renewed signature may be waiting.
	signedAt time.Time
}

// A Refusal is an answer that reached us and failed a check: not a
// network failure, and trying again soon will not change it.
type Refusal struct {
	// Reason says what failed, for the log: it may quote what the peer
	// sent.
	Reason string
	// Public is the coarse reason anyone may see (get_endorsements,
	// /health): one of the Refused constants, never anything the peer
	// sent. "" reads as Refused.
	Public string
	// MaxBytes is the fetcher's MaxBytes when the answer was refused for
	// going over a byte limit the fetch client enforces (Public is then
	// fetch.RefusedTooLarge); 0 for any other refusal. A caller that sets
	// the limit can say how to raise it.
	MaxBytes int64
}

func (r *Refusal) Error() string { return r.Reason }

func refuse(format string, args ...any) error { return &Refusal{Reason: fmt.Sprintf(format, args...)} }

// refuseAs is refuse with the public reason.
func refuseAs(public, format string, args ...any) error {
	return &Refusal{Reason: fmt.Sprintf(format, args...), Public: public}
}

// The public reasons a peer or an origin is refused with, besides the
// fetch client's own (fetch.RefusedAddress, RefusedRedirect,
// RefusedEncoding, RefusedTooLarge) and fetch.Unreachable. They name the
// check that failed and nothing of what was sent: a tool's output or
// /health may show them to anyone, while the full reason goes to the log.
const (
	RefusedPlain              = "refused"
	RefusedSignature          = "refused: bad signature"
	RefusedInvalid            = "refused: invalid registry"
	RefusedExpired            = "refused: expired"
	RefusedRollback           = "refused: rollback"
	RefusedAuditLog           = "refused: audit log"
	RefusedInvalidEndorsement = "refused: invalid endorsement"
)

// PublicReasons are every reason PublicReason gives: the values the
// schemas of get_endorsements' and /health's reasons list.
var PublicReasons = []string{
	fetch.Unreachable, RefusedPlain, fetch.RefusedAddress, fetch.RefusedRedirect, fetch.RefusedEncoding, fetch.RefusedTooLarge,
	RefusedSignature, RefusedInvalid, RefusedExpired, RefusedRollback, RefusedAuditLog, RefusedInvalidEndorsement, NameLikeOurs,
}

// PublicReason is the coarse reason for err, a fetch's failure: what
// get_endorsements and /health show. It never holds anything the other
// side sent.
func PublicReason(err error) string {
	var r *Refusal
	if errors.As(err, &r) {
		if r.Public != "" {
			return r.Public
		}
		return RefusedPlain
	}
	return fetch.PublicReason(err)
}

// tagged gives err, a refusal, the public reason public unless it has
// one.
func tagged(err error, public string) error {
	var r *Refusal
	if errors.As(err, &r) && r.Public == "" {
		r.Public = public
	}
	return err
}

// IsRefusal reports whether err is a Refusal rather than a failure to reach
// the peer.
func IsRefusal(err error) bool {
	var r *Refusal
	return errors.As(err, &r)
}

// AcceptOptions are what Accept checks a copy against besides the endorsed
// key.
type AcceptOptions struct {
	// Now is the time the signature's expiry is judged at; zero means
	// time.Now().
	Now time.Time
	// AllowExpired accepts a signature that has expired or never expires
	// (3gs serve --allow-expired).
	AllowExpired bool
	// Last is the copy accepted before, nil for none: the new copy may not
	// go back from it (version, audit log head).
	Last *Copy
	// Tail reads the peer's published audit log from the entry after seq
	// after; it may stop anywhere from seq until on. Accept calls it only
	// when Last names a log head and the new copy a later one. Nil: such
	// a copy is refused, since nothing shows its log extends Last's.
	Tail func(after, until int) (io.ReadCloser, error)
}

// Accept checks data and its signature document sig as a registry of the
// curator whose endorsed key is key, and returns it as a Copy without the
// URL, ETag and fetch time, which only the caller knows. o may be nil: no
// copy before, expiry judged at the present time.
//
// The signature must not have expired: a copy past its expiry is what an
// attacker replays to keep readers on it after the curator has moved on
// (a freeze attack). One without an expiry is refused too, since it could
// be replayed for ever. o.AllowExpired accepts both.
//
// With o.Last set, an older version is refused (rollback), and so is a
// signature made before o.Last's (signedNoEarlier), and the
// same version with other bytes (a curator changes the version with every
// change; two different registries under one version mean someone is
// showing different readers different documents). When o.Last's signature
// covered an audit log head, the new copy's must cover the same head with
// the same bytes, or a later one whose published log extends it (see
// checkLog).
func Accept(key ed25519.PublicKey, data, sig []byte, o *AcceptOptions) (*Copy, error) {
	if o == nil {
		o = &AcceptOptions{}
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	v, err := signature.Verify(data, sig, key)
	if err != nil {
		return nil, refuseAs(RefusedSignature, "signature: %v", err)
	}
	// Only the bytes the curator signed are judged for their shape, and
	// before the decode, whose cost grows with them.
	if err := checkShape(data); err != nil {
		return nil, err
	}
	reg, err := registry.Load(data)
	if err != nil {
		return nil, refuseAs(RefusedInvalid, "registry: %v", err)
	}
	if err := signature.CheckCurator(reg, key); err != nil {
		return nil, refuseAs(RefusedSignature, "%v", err)
	}
	// Judged only now that the signature is known to be the curator's, so
	// the date named is the one the curator signed.
	if why := expiryProblem(v.Expires, now); why != "" && !o.AllowExpired {
		return nil, refuseAs(RefusedExpired, "%s", why)
	}
	c := &Copy{Registry: reg, Signature: sig, Expires: v.Expires, Log: v.Log, signedAt: v.SignedAt}
	if last := o.Last; last != nil {
		switch cmp := registry.CompareVersions(reg.Version(), last.Registry.Version()); {
		case cmp < 0:
			return nil, refuseAs(RefusedRollback, "rollback: version %s is older than the accepted %s", reg.Version(), last.Registry.Version())
		case cmp == 0 && reg.SHA256() != last.Registry.SHA256():
			return nil, refuseAs(RefusedRollback, "version %s again with different content (SHA-256 %.12s, accepted %.12s); a changed registry must carry a new version", reg.Version(), reg.SHA256(), last.Registry.SHA256())
		}
		if err := signedNoEarlier(last, c); err != nil {
			return nil, err
		}
		if err := checkLog(key, last, c, o.Tail); err != nil {
			return nil, tagged(err, RefusedAuditLog)
		}
	}
	return c, nil
}

// expiryProblem says why a signature that expires at exp no longer
// vouches for its registry at now, or "" when it still does.
func expiryProblem(exp, now time.Time) string {
	switch {
	case exp.IsZero():
		return "the signature never expires: it was made by a 3gs from before signatures expired, and such a copy could be replayed for ever; its curator must sign the registry again with a current 3gs (3gs sign)"
	case signature.Expired(exp, now):
		return fmt.Sprintf("the signature expired at %s: a copy past its expiry is what a freeze attack replays to hide the curator's later changes; its curator signs the registry again (3gs sign)", exp.UTC().Format(time.RFC3339))
	}
	return ""
}

// renewDue says whether the peer may hold a newer signature for c's
// unchanged registry: a signer renews its signature once half its
// validity is gone (3gs serve does), so from then on a fetch the peer
// answers "not modified" also reads the signature again.
func (c *Copy) renewDue(now time.Time) bool {
	if c.Expires.IsZero() || c.signedAt.IsZero() {
		return true
	}
	return !now.Before(c.signedAt.Add(c.Expires.Sub(c.signedAt) / 2))
}

// Fetcher reads peer registries over HTTP within fixed bounds, through
// the one outbound client (internal/fetch) and its address, redirect,
// encoding and byte policy.
type Fetcher struct {
	Client *fetch.Client
	// MaxBytes bounds a registry body, and the audit log read to check
	// one; more is refused.
	MaxBytes int64
	// Timeout bounds one peer's fetch: registry, signature and, when it
	// is read, the audit log together.
	Timeout time.Duration
	// Operator says the URLs this fetcher is given are the operator's
	// (fetch.Request.Operator): a flag such as --follow or --from, or
	// the endorsements of the registry this node is the origin of. Left
	// false, as on a read replica, whose endorsements are the followed
	// origin's, a URL naming a non-public host is refused.
	Operator bool
}

// AsOperator is a copy of f, sharing its client and budget, whose
// fetches are the operator's (or not).
func (f *Fetcher) AsOperator(operator bool) *Fetcher {
	c := *f
	c.Operator = operator
	return &c
}

// DefaultTimeout bounds one peer's fetch; DefaultConnectTimeout its
// connection.
const (
	DefaultTimeout        = 20 * time.Second
	DefaultConnectTimeout = fetch.DefaultConnectTimeout
)

// NewFetcher returns a Fetcher with its own client: connection and header
// timeouts, and a byte budget of two registries' worth for all the bodies
// its fetches hold at once (more parallel fetches wait their turn rather
// than hold more). Its fetches are not the operator's: see AsOperator.
func NewFetcher(maxBytes int64, timeout time.Duration) *Fetcher {
	client := fetch.New(fetch.Options{ConnectTimeout: DefaultConnectTimeout, HeaderTimeout: timeout, Budget: 2*maxBytes + signature.MaxSize})
	return &Fetcher{Client: client, MaxBytes: maxBytes, Timeout: timeout}
}

// Fetch reads the registry at rawURL (see Locate) and accepts it for key
// at time now, refusing an expired signature. With last set and its ETag
// still current, the peer answers 304 and Fetch returns a copy of last
// with a new fetch time.
func (f *Fetcher) Fetch(ctx context.Context, key ed25519.PublicKey, rawURL string, last *Copy, now time.Time) (*Copy, error) {
	return f.FetchWith(ctx, key, rawURL, AcceptOptions{Now: now, Last: last})
}

// FetchWith is Fetch with every check Accept makes: o.Last is the copy
// accepted before, and o.Tail, when nil, reads the audit log the peer
// publishes beside its registry (LocateLog) within the fetch's timeout
// and byte limit.
func (f *Fetcher) FetchWith(ctx context.Context, key ed25519.PublicKey, rawURL string, o AcceptOptions) (*Copy, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	regURL, sigURL, err := Locate(rawURL)
	if err != nil {
		return nil, refuseAs(RefusedInvalidEndorsement, "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	if o.Tail == nil {
		o.Tail = func(after, until int) (io.ReadCloser, error) { return f.logTail(ctx, rawURL, after, until) }
	}
	last := o.Last
	etag := ""
	if last != nil && last.URL == rawURL {
		etag = last.ETag
	}
	data, newTag, notModified, inline, release, err := f.get(ctx, regURL, f.MaxBytes, etag, "registry")
	// The body's room in the fetch budget is held until it is checked
	// (and, accepted, becomes the copy held).
	defer release()
	if err != nil {
		return nil, err
	}
	if notModified {
		return f.unchanged(ctx, key, sigURL, inline, o)
	}
	// 3gs serve sends the signature with the registry (Registry-Signature),
	// so the pair cannot straddle a change the peer publishes between two
	// requests; other hosts serve it beside the registry.
	sig := inline
	if sig == nil {
		if sig, err = f.signature(ctx, sigURL); err != nil {
			return nil, err
		}
	}
	c, err := Accept(key, data, sig, &o)
	if err != nil {
		return nil, err
	}
	c.URL, c.ETag, c.FetchedAt = rawURL, newTag, o.Now
	return c, nil
}

// unchanged answers a 304: the registry is still o.Last's, but its
// signature may have been renewed, which the ETag (the registry's digest
// on a 3gs node) does not show. A 3gs node sends its current signature
// with the 304 (inline); elsewhere it is read again once a renewal may be
// due. A new signature is checked like any copy; without one, o.Last's
// must still be in force.
func (f *Fetcher) unchanged(ctx context.Context, key ed25519.PublicKey, sigURL string, inline []byte, o AcceptOptions) (*Copy, error) {
	last := o.Last
	sig := inline
	if sig == nil && last.renewDue(o.Now) {
		var err error
		if sig, err = f.signature(ctx, sigURL); err != nil {
			return nil, err
		}
	}
	if sig != nil && !bytes.Equal(sig, last.Signature) {
		c, err := Accept(key, last.Registry.Bytes(), sig, &o)
		if err != nil {
			return nil, err
		}
		c.URL, c.ETag, c.FetchedAt = last.URL, last.ETag, o.Now
		return c, nil
	}
	if why := expiryProblem(last.Expires, o.Now); why != "" && !o.AllowExpired {
		return nil, refuseAs(RefusedExpired, "not modified, and %s", why)
	}
	c := *last
	c.FetchedAt = o.Now
	return &c, nil
}

// get reads one URL of at most limit bytes. A status other than 200 (or
// 304 to a conditional request) is a failure to reach the peer's
// document; a body over the limit is refused.
//
// It also returns the signature document a 3gs node sends in the
// Registry-Signature header (base64), or nil, and release, which gives
// the body's bytes back to the fetch budget once the caller is done
// checking it (never nil).
func (f *Fetcher) get(ctx context.Context, u string, limit int64, etag, what string) (body []byte, tag string, notModified bool, sig []byte, release func(), err error) {
	release = func() {}
	resp, err := f.Client.Get(ctx, fetch.Request{URL: u, What: what, Accept: "application/json", IfNoneMatch: etag, Limit: limit, Operator: f.Operator})
	if err != nil {
		return nil, "", false, nil, release, f.failure(err)
	}
	// Read on a 304 too: a 3gs node sends its current signature with it,
	// which may be newer than the one held for the unchanged registry.
	if h := resp.Header.Get("Registry-Signature"); h != "" && base64.StdEncoding.DecodedLen(len(h)) <= signature.MaxSize {
		if doc, err := base64.StdEncoding.DecodeString(h); err == nil {
			sig = doc
		}
	}
	switch {
	case resp.Status == http.StatusNotModified && etag != "":
		return nil, etag, true, sig, release, nil
	case resp.Status == http.StatusNotFound && what == "signature":
		// Not a failure to reach the peer: it publishes its registry
		// unsigned, which no retry changes.
		return nil, "", false, nil, release, refuseAs(RefusedSignature, "signature %s: HTTP 404: the peer publishes no signature, and a peer's registry is accepted only signed; ask its curator to sign it (3gs sign)", u)
	case resp.Status == http.StatusNotFound && what == healthWhat:
		return nil, "", false, nil, release, ErrNoHealth
	case resp.Status != http.StatusOK:
		// Whatever the status, it says only that the document was not
		// there for us: publicly as unreachable as a closed port.
		return nil, "", false, nil, release, &fetch.Error{Public: fetch.Unreachable, Detail: fmt.Sprintf("%s %s: HTTP %d", what, u, resp.Status)}
	}
	tag = resp.Header.Get("ETag")
	if len(tag) > 256 {
		tag = "" // not worth keeping; the next fetch is unconditional
	}
	return resp.Body, tag, false, sig, resp.Release, nil
}

// signature reads the signature document at u. Its few bytes are
// given back to the fetch budget at once: what bounds memory there is
// signature.MaxSize.
func (f *Fetcher) signature(ctx context.Context, u string) ([]byte, error) {
	sig, _, _, _, release, err := f.get(ctx, u, signature.MaxSize, "", "signature")
	release()
	return sig, err
}

// failure is err, from the fetch client, as this package reports it: a
// refusal (address, redirect, encoding, size) is a Refusal with the same
// public reason, an answer out of time a TimeoutError; anything else is a
// failure to reach the peer.
func (f *Fetcher) failure(err error) error {
	var fe *fetch.Error
	switch {
	case errors.As(err, &fe) && fe.Refused && fe.Public == fetch.RefusedTooLarge:
		return &Refusal{Reason: fe.Detail, Public: fe.Public, MaxBytes: f.MaxBytes}
	case errors.As(err, &fe) && fe.Refused:
		return &Refusal{Reason: fe.Detail, Public: fe.Public}
	case errors.Is(err, context.DeadlineExceeded):
		return &TimeoutError{Timeout: f.Timeout, Err: err}
	}
	return err
}

// TimeoutError is a fetch that got no complete answer within Timeout,
// the fetcher's bound on the whole fetch. It wraps the client's error.
type TimeoutError struct {
	Timeout time.Duration
	Err     error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%v (the whole fetch may take %s)", e.Err, e.Timeout)
}

func (e *TimeoutError) Unwrap() error { return e.Err }
