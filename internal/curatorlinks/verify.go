package curatorlinks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/fetch"
)

// KeyNotFound is the public reason of a page that answered without the
// key; the other reasons are internal/fetch's (Unreachable and the
// Refused ones).
const KeyNotFound = "key not found"

// Reasons are every public reason a check fails with: the enum of the
// schemas' reason fields.
var Reasons = []string{fetch.Unreachable, fetch.RefusedAddress, fetch.RefusedRedirect, fetch.RefusedEncoding, fetch.RefusedTooLarge, KeyNotFound}

// Bounds of one check. A profile page of a large site is a few hundred
// KiB of HTML; 2 MiB leaves room and is still small beside the fetch
// budget. The proof file holds one short member.
const (
	DefaultMaxBytes = 2 << 20
	ProofMaxBytes   = 64 << 10
	DefaultTimeout  = 20 * time.Second
)

// Failure is a check that did not verify: Public is one of Reasons, safe
// to show anyone; Detail, for the log, says what happened.
type Failure struct {
	Public string
	Detail string
}

func (f *Failure) Error() string { return f.Detail }

// PublicReason is err's public reason: a Failure's, or Unreachable.
func PublicReason(err error) string {
	var f *Failure
	if errors.As(err, &f) {
		return f.Public
	}
	return fetch.Unreachable
}

// Verifier fetches links to check them.
type Verifier struct {
	Client *fetch.Client
	// MaxBytes bounds a page's body; 0 means DefaultMaxBytes.
	MaxBytes int64
	// Timeout bounds one check, every fetch of it together; 0 means
	// DefaultTimeout.
	Timeout time.Duration
}

// Verify checks that link proves key (pk:…): nil when it does, else a
// *Failure. A bare origin is checked first by its /.well-known/3gs.json,
// then by its front page; any other link by its page.
//
// operator says the operator chose link (Operator): only then may it
// name a non-public address. Any other link whose host fetch.CheckHost
// refuses fails at once, refused, without a connection.
func (v *Verifier) Verify(ctx context.Context, key, link string, operator bool) error {
	timeout := v.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return &Failure{Public: fetch.Unreachable, Detail: fmt.Sprintf("identity link %q is not an http(s) URL", link)}
	}
	if !operator {
		if _, err := fetch.CheckHost(u.Hostname()); err != nil {
			return &Failure{Public: fetch.RefusedAddress, Detail: fmt.Sprintf("identity link %s: %v; it came from a registry this node is not the origin of, so it is not fetched", u.Redacted(), err)}
		}
	}
	var proofErr error
	if BareOrigin(u) {
		if proofErr = v.proof(ctx, ProofURL(u), key, operator); proofErr == nil {
			return nil
		}
	}
	err = v.page(ctx, link, key, operator)
	if err == nil || proofErr == nil {
		return err
	}
	// Both failed: a proof file that answered without the key says more
	// than a front page that did not answer.
	first, second := err, proofErr
	if PublicReason(proofErr) == KeyNotFound && PublicReason(err) != KeyNotFound {
		first, second = proofErr, err
	}
	var f *Failure
	if errors.As(first, &f) {
		f.Detail += "; " + second.Error()
	}
	return first
}

// page checks that the page at link holds key.
func (v *Verifier) page(ctx context.Context, link, key string, operator bool) error {
	limit := v.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	body, err := v.get(ctx, fetch.Request{URL: link, What: "identity page", Accept: "text/html, text/plain;q=0.9, */*;q=0.8", Limit: limit, Operator: operator})
	if err != nil {
		return err
	}
	if !Contains(body, key) {
		return &Failure{Public: KeyNotFound, Detail: fmt.Sprintf("identity page %s: %d bytes, without %s as a whole word", link, len(body), key)}
	}
	return nil
}

// proof checks that the proof file at at is {"pubkey": key}.
func (v *Verifier) proof(ctx context.Context, at, key string, operator bool) error {
	body, err := v.get(ctx, fetch.Request{URL: at, What: "identity proof", Accept: "application/json", Limit: ProofMaxBytes, Operator: operator})
	if err != nil {
		return err
	}
	doc, err := gen.DecodeIdentityProof(body)
	if err != nil {
		return &Failure{Public: KeyNotFound, Detail: fmt.Sprintf("identity proof %s is not {\"pubkey\": \"pk:…\"}: %v", at, oneLine(err.Error()))}
	}
	if doc.Pubkey != key {
		return &Failure{Public: KeyNotFound, Detail: fmt.Sprintf("identity proof %s names %s, not %s", at, doc.Pubkey, key)}
	}
	return nil
}

// get fetches req and returns the body of a 200.
func (v *Verifier) get(ctx context.Context, req fetch.Request) ([]byte, error) {
	resp, err := v.Client.Get(ctx, req)
	if err != nil {
		return nil, &Failure{Public: fetch.PublicReason(err), Detail: err.Error()}
	}
	// The budget bounds what is being read at once, not what is kept;
	// the body is searched and dropped before the next fetch.
	defer resp.Release()
	if resp.Status != http.StatusOK {
		return nil, &Failure{Public: fetch.Unreachable, Detail: fmt.Sprintf("%s %s: HTTP status %d", req.What, req.URL, resp.Status)}
	}
	return resp.Body, nil
}

// oneLine keeps a message that may quote what a page sent on one line
// of the log, and short.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// Refused reports whether this node refuses to fetch link, claimed by s:
// it is not the operator's (Operator) and its host is not public
// (fetch.CheckHost).
func Refused(s Subject, link string) bool {
	if Operator(s, link) {
		return false
	}
	u, err := url.Parse(link)
	if err != nil {
		return true
	}
	_, err = fetch.CheckHost(u.Hostname())
	return err != nil
}

// Operator reports whether link, claimed by s, is the operator's choice,
// fetched with the operator's exemption (fetch.Request.Operator): a link
// of our own curator when this node is the origin, and of a curator our
// registry endorses, the one that names the scheme, address and port our
// registry endorses them at (another port of that address is another
// service of ours). Any other link is the claim of someone else: were it
// fetched as the operator's, a followed origin or a peer could make us
// probe our own network and read the outcome (verified, unreachable, key
// not found) back.
func Operator(s Subject, link string) bool {
	if !s.Operator {
		return false
	}
	if s.Home == "" {
		return true
	}
	u, err := url.Parse(link)
	h, err2 := url.Parse(s.Home)
	if err != nil || err2 != nil || !strings.EqualFold(h.Scheme, u.Scheme) || fetch.Port(h) != fetch.Port(u) {
		return false
	}
	a, err := netip.ParseAddr(u.Hostname())
	b, err2 := netip.ParseAddr(h.Hostname())
	return err == nil && err2 == nil && a.WithZone("").Unmap() == b.WithZone("").Unmap()
}
