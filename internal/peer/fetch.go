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

// Accept checks data and its signature document sig as a registry of the
// curator whose endorsed key is key, and returns it loaded. last, when not
// nil, is the copy accepted before: an older version is refused
// (rollback), and so is the same version with other bytes (a curator
// changes the version with every change; two different registries under
// one version mean someone is showing different readers different
// documents).
func Accept(key ed25519.PublicKey, data, sig []byte, last *registry.Registry) (*registry.Registry, error) {
	if _, err := signature.Verify(data, sig, key); err != nil {
		return nil, refuse("signature: %v", err)
	}
	reg, err := registry.Load(data)
	if err != nil {
		return nil, refuse("registry: %v", err)
	}
	if err := signature.CheckCurator(reg, key); err != nil {
		return nil, refuse("%v", err)
	}
	if last != nil {
		switch c := registry.CompareVersions(reg.Version(), last.Version()); {
		case c < 0:
			return nil, refuse("rollback: version %s is older than the accepted %s", reg.Version(), last.Version())
		case c == 0 && reg.SHA256() != last.SHA256():
			return nil, refuse("version %s again with different content (SHA-256 %.12s, accepted %.12s); a changed registry must carry a new version", reg.Version(), reg.SHA256(), last.SHA256())
		}
	}
	return reg, nil
}

// Fetcher reads peer registries over HTTP within fixed bounds.
type Fetcher struct {
	Client *http.Client
	// MaxBytes bounds a registry body; more is refused.
	MaxBytes int64
	// Timeout bounds one peer's fetch: registry and signature together.
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

// Fetch reads the registry at rawURL (see Locate) and accepts it for key.
// With last set and its ETag still current, the peer answers 304 and
// Fetch returns a copy of last with a new fetch time.
func (f *Fetcher) Fetch(ctx context.Context, key ed25519.PublicKey, rawURL string, last *Copy, now time.Time) (*Copy, error) {
	regURL, sigURL, err := Locate(rawURL)
	if err != nil {
		return nil, refuse("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	etag := ""
	if last != nil && last.URL == rawURL {
		etag = last.ETag
	}
	data, newTag, notModified, inline, err := f.get(ctx, regURL, f.MaxBytes, etag, "registry")
	if err != nil {
		return nil, err
	}
	if notModified {
		c := *last
		c.FetchedAt = now
		return &c, nil
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
	var prev *registry.Registry
	if last != nil {
		prev = last.Registry
	}
	reg, err := Accept(key, data, sig, prev)
	if err != nil {
		return nil, err
	}
	return &Copy{URL: rawURL, Registry: reg, Signature: sig, ETag: newTag, FetchedAt: now}, nil
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
	switch {
	case resp.StatusCode == http.StatusNotModified && etag != "":
		return nil, etag, true, nil, nil
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
	if h := resp.Header.Get("Registry-Signature"); h != "" && base64.StdEncoding.DecodedLen(len(h)) <= signature.MaxSize {
		if doc, err := base64.StdEncoding.DecodeString(h); err == nil {
			sig = doc
		}
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
