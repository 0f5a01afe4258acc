package peer

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/three-good-sources/3gs/internal/auditlog"
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
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return r.Reason }

func refuse(format string, args ...any) error { return &Refusal{fmt.Sprintf(format, args...)} }

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
		return nil, refuse("signature: %v", err)
	}
	reg, err := registry.Load(data)
	if err != nil {
		return nil, refuse("registry: %v", err)
	}
	if err := signature.CheckCurator(reg, key); err != nil {
		return nil, refuse("%v", err)
	}
	// Judged only now that the signature is known to be the curator's, so
	// the date named is the one the curator signed.
	if why := expiryProblem(v.Expires, now); why != "" && !o.AllowExpired {
		return nil, refuse("%s; to accept it anyway, start 3gs serve with --allow-expired", why)
	}
	c := &Copy{Registry: reg, Signature: sig, Expires: v.Expires, Log: v.Log}
	if at, err := time.Parse(time.RFC3339, v.SignedAt); err == nil {
		c.signedAt = at
	}
	if last := o.Last; last != nil {
		switch cmp := registry.CompareVersions(reg.Version(), last.Registry.Version()); {
		case cmp < 0:
			return nil, refuse("rollback: version %s is older than the accepted %s", reg.Version(), last.Registry.Version())
		case cmp == 0 && reg.SHA256() != last.Registry.SHA256():
			return nil, refuse("version %s again with different content (SHA-256 %.12s, accepted %.12s); a changed registry must carry a new version", reg.Version(), reg.SHA256(), last.Registry.SHA256())
		}
		if err := signedNoEarlier(last, c); err != nil {
			return nil, err
		}
		if err := checkLog(key, last, c, o.Tail); err != nil {
			return nil, err
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

// Fetcher reads peer registries over HTTP within fixed bounds.
type Fetcher struct {
	Client *http.Client
	// MaxBytes bounds a registry body, and the audit log read to check
	// one; more is refused.
	MaxBytes int64
	// Timeout bounds one peer's fetch: registry, signature and, when it
	// is read, the audit log together.
	Timeout time.Duration
}

// DefaultTimeout bounds one peer's fetch; DefaultConnectTimeout its
// connection.
const (
	DefaultTimeout        = 20 * time.Second
	DefaultConnectTimeout = 5 * time.Second
	maxRedirects          = 5
)

// NewFetcher returns a Fetcher with its own client: connection and header
// timeouts, at most five redirects and those only to http or https.
func NewFetcher(maxBytes int64, timeout time.Duration) *Fetcher {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: DefaultConnectTimeout}).DialContext,
		TLSHandshakeTimeout:   DefaultConnectTimeout,
		ResponseHeaderTimeout: timeout,
		// A registry's headers are a few hundred bytes (the largest is the
		// signature, at most 4 KiB in base64); the default allows 10 MiB.
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
	}
	client := &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return refuse("redirected to %s, which is not http or https", req.URL.Redacted())
			}
			// Only within the endorsed host: a redirect elsewhere would
			// let a peer make us probe other machines (our own network
			// among them) and read the outcome in get_endorsements.
			if req.URL.Hostname() != via[0].URL.Hostname() {
				return refuse("redirected to another host, %s; endorse the URL the registry is really at", req.URL.Host)
			}
			if len(via) >= maxRedirects {
				return refuse("more than %d redirects", maxRedirects)
			}
			return nil
		},
	}
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
		return nil, refuse("%v", err)
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
	data, newTag, notModified, inline, err := f.get(ctx, regURL, f.MaxBytes, etag, "registry")
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
		if sig, _, _, _, err = f.get(ctx, sigURL, signature.MaxSize, "", "signature"); err != nil {
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
		if sig, _, _, _, err = f.get(ctx, sigURL, signature.MaxSize, "", "signature"); err != nil {
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
		return nil, refuse("not modified, and %s; to accept it anyway, start 3gs serve with --allow-expired", why)
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
// Registry-Signature header (base64), or nil.
func (f *Fetcher) get(ctx context.Context, u string, limit int64, etag, what string) (body []byte, tag string, notModified bool, sig []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", false, nil, refuse("%s URL %s: %v", what, u, err)
	}
	req.Header.Set("Accept", "application/json")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := f.Client.Do(req)
	if err != nil {
		return nil, "", false, nil, f.failure(what, u, err)
	}
	defer resp.Body.Close()
	// Read on a 304 too: a 3gs node sends its current signature with it,
	// which may be newer than the one held for the unchanged registry.
	if h := resp.Header.Get("Registry-Signature"); h != "" && base64.StdEncoding.DecodedLen(len(h)) <= signature.MaxSize {
		if doc, err := base64.StdEncoding.DecodeString(h); err == nil {
			sig = doc
		}
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && etag != "":
		return nil, etag, true, sig, nil
	case resp.StatusCode == http.StatusNotFound && what == "signature":
		// Not a failure to reach the peer: it publishes its registry
		// unsigned, which no retry changes.
		return nil, "", false, nil, refuse("signature %s: HTTP 404: the peer publishes no signature, and a peer's registry is accepted only signed; ask its curator to sign it (3gs sign)", u)
	case resp.StatusCode != http.StatusOK:
		return nil, "", false, nil, fmt.Errorf("%s %s: HTTP %d", what, u, resp.StatusCode)
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(resp.Body, limit+1))
	if n > limit {
		return nil, "", false, nil, refuse("%s %s: more than %d bytes", what, u, limit)
	}
	if err != nil {
		return nil, "", false, nil, f.failure(what, u, err)
	}
	tag = resp.Header.Get("ETag")
	if len(tag) > 256 {
		tag = "" // not worth keeping; the next fetch is unconditional
	}
	return buf.Bytes(), tag, false, sig, nil
}

// failure describes an error met while reading u.
func (f *Fetcher) failure(what, u string, err error) error {
	var r *Refusal
	switch {
	case errors.As(err, &r):
		return refuse("%s %s: %s", what, u, r.Reason)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s %s: no complete answer within %s", what, u, f.Timeout)
	}
	return fmt.Errorf("%s %s: %w", what, u, unwrapURLError(err))
}

// unwrapURLError drops the *url.Error wrapper, whose text repeats the
// method and URL the caller's message already names.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
