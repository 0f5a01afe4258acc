package identity

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
// home is "" for a link our own curator claims, and for one an endorsed
// curator claims, the URL our registry endorses that curator at: see
// literalRefused.
func (v *Verifier) Verify(ctx context.Context, key, link, home string) error {
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
	if err := literalRefused(u, home); err != nil {
		return err
	}
	var proofErr error
	if BareOrigin(u) {
		if proofErr = v.proof(ctx, ProofURL(u), key); proofErr == nil {
			return nil
		}
	}
	err = v.page(ctx, link, key)
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
func (v *Verifier) page(ctx context.Context, link, key string) error {
	limit := v.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	body, err := v.get(ctx, fetch.Request{URL: link, What: "identity page", Accept: "text/html, text/plain;q=0.9, */*;q=0.8", Limit: limit})
	if err != nil {
		return err
	}
	if !Contains(body, key) {
		return &Failure{Public: KeyNotFound, Detail: fmt.Sprintf("identity page %s: %d bytes, without %s as a whole word", link, len(body), key)}
	}
	return nil
}

// proof checks that the proof file at at is {"pubkey": key}.
func (v *Verifier) proof(ctx context.Context, at, key string) error {
	body, err := v.get(ctx, fetch.Request{URL: at, What: "identity proof", Accept: "application/json", Limit: ProofMaxBytes})
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

// literalRefused refuses a link an endorsed curator claims (home is not
// "") that names a non-public IP address literally, unless it is the
// scheme, address and port our registry endorses that curator at (another
// port of that address is another service of ours). internal/fetch connects
// to a non-public address only when the URL names it, taking the literal
// for the operator's choice; a link in a peer's registry is the peer's
// choice, and would otherwise let the peer make us probe our own network
// and read the outcome (unreachable or key not found) back. The address
// our curator placed the peer at is already one we fetch from for it.
func literalRefused(u *url.URL, home string) error {
	if home == "" {
		return nil
	}
	a, err := netip.ParseAddr(u.Hostname())
	if err != nil || fetch.Public(a.WithZone("")) {
		return nil // a name: its addresses are checked when connecting
	}
	if h, err := url.Parse(home); err == nil && strings.EqualFold(h.Scheme, u.Scheme) && fetch.Port(h) == fetch.Port(u) {
		if b, err := netip.ParseAddr(h.Hostname()); err == nil && b.WithZone("").Unmap() == a.WithZone("").Unmap() {
			return nil
		}
	}
	return &Failure{Public: fetch.RefusedAddress, Detail: fmt.Sprintf("identity link %s of an endorsed curator names the non-public address %s, which is not where our registry endorses that curator (%s); only that scheme, address and port may be named", u.Redacted(), a, home)}
}
