// Package fetch is the one way 3gs reads anything from another machine:
// endorsed peers' registries, signatures and audit logs (internal/peer),
// a read replica's origin (internal/follow), and the node 3gs proposals
// vote calls (a POST, the one kind it sends). Whatever fetches later
// (identity proofs, link checks) goes through it too, so that one policy
// guards the way out:
//
//   - Hosts are judged by one function, CheckHost, after reading them as
//     a resolver could (127.1, 2130706433, ::ffff:7f00:1 are 127.0.0.1).
//     A request is the operator's (Request.Operator, Options.Operator)
//     when its URL came from a flag or from the registry this node is the
//     origin of; any other (a followed origin's or a peer's registry, a
//     proposal) is refused before connecting when CheckHost refuses its
//     host: a non-public address, or a name only a local network
//     resolves.
//   - Addresses are checked again when connecting, on the resolved IP:
//     loopback, private, link-local, multicast, unspecified, carrier-grade
//     NAT and other non-public ranges are refused, but for an operator's
//     request whose URL names that very IP as a literal. A name that
//     resolves, or rebinds, to such an address is refused. No proxy is
//     used: through one, the address could not be checked.
//   - A redirect is followed only to the same scheme, host and port, at
//     most five times; anything else is refused, and the error says so.
//   - Bodies come as sent: Accept-Encoding: identity, no transparent
//     decompression, and a Content-Encoding other than identity is
//     refused, so a small answer can never inflate into a large one.
//   - A body is read into one buffer sized from its limit and its
//     Content-Length, never past the limit, and every body being read
//     (but the small ones, of a limit up to 64 KiB) holds its size in one
//     byte budget shared by all fetches in flight. A caller asks for at
//     most one counted body at a time, so no two fetches can each hold
//     room while waiting for more.
//
// A link check (internal/linkcheck) asks for HEAD, and for redirects to
// be returned rather than followed (Request.NoRedirect): it needs to see
// where a page moved. It follows a Location itself only where
// MayFollow allows, and every connection still passes the address check.
//
// 3gs health does not use it: it asks the operator's own server, at the
// one URL the operator gives, follows no redirect and reads at most
// 1 MiB; nothing another machine controls steers it. The load generators
// (internal/loadgen, bench/) target the servers they start.
//
// Errors are *Error: a coarse Public reason that may be shown to anyone
// (a tool's output, /health), and a Detail for the operator's log. No
// byte of what the other side sent is ever in Public.
package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The public reasons a fetch fails with. They say what kind of thing
// went wrong and nothing the other side sent: a closed port, a refused
// connection, a timeout and an HTTP error status are all Unreachable, so
// no one can use a fetch's outcome to scan what it can reach.
const (
	Unreachable     = "unreachable"
	RefusedAddress  = "refused: address not allowed"
	RefusedRedirect = "refused: redirect"
	RefusedEncoding = "refused: encoding"
	RefusedTooLarge = "refused: too large"
)

// Error is a failed fetch.
type Error struct {
	// Public is the coarse reason (one of the constants above, or a
	// caller's own of the same kind), safe to show to anyone.
	Public string
	// Detail says what happened, with the URL, for the log.
	Detail string
	// Refused: the address, or what came back, failed a check, which
	// trying again soon will not change; otherwise the other side was not
	// reached, or did not answer in full.
	Refused bool
	Err     error
}

func (e *Error) Error() string { return e.Detail }
func (e *Error) Unwrap() error { return e.Err }

// PublicReason is err's coarse reason: an *Error's Public, or
// Unreachable for any other error.
func PublicReason(err error) string {
	var fe *Error
	if errors.As(err, &fe) && fe.Public != "" {
		return fe.Public
	}
	return Unreachable
}

// Options configure a Client.
type Options struct {
	// ConnectTimeout bounds each connection (and TLS handshake).
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for an answer's headers.
	HeaderTimeout time.Duration
	// Budget is how many body bytes all of the client's fetches in flight
	// may hold together; a fetch waits (within its context) for room.
	// At least the largest single limit asked for is always granted.
	Budget int64
	// Resolver resolves names; nil is the system's. Tests set one.
	Resolver *net.Resolver
	// UserAgent is sent with every request; empty sends Go's default.
	UserAgent string
	// Operator makes every request of the client the operator's (see
	// Request.Operator): for a client that fetches only URLs the operator
	// typed or curates, such as 3gs check on its own registry.
	Operator bool
}

// DefaultConnectTimeout bounds a connection when Options leave it zero.
const DefaultConnectTimeout = 5 * time.Second

// maxRedirects is the most redirects one fetch follows.
const maxRedirects = 5

// smallBody is the largest limit whose bodies the budget does not count.
const smallBody = 64 << 10

// maxHeaderBytes bounds an answer's headers: a registry's are a few
// hundred bytes (the largest is a signature, at most 4 KiB in base64);
// the default allows 10 MiB.
const maxHeaderBytes = 64 << 10

// Client fetches under the policy above.
type Client struct {
	// public fetches what others chose; operator, with a transport (and
	// so connections) of its own, what the operator did: a connection the
	// operator's exemption opened is never reused for another request.
	public, operator trust
	budget           *budget
	userAgent        string
	allOperator      bool
}

// trust is the pair of clients of one transport.
type trust struct {
	hc *http.Client
	// noFollow shares hc's transport and returns any redirect as it came.
	noFollow *http.Client
}

// New returns a client with its own transport and byte budget.
func New(o Options) *Client {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	return &Client{
		public:      newTrust(o, false),
		operator:    newTrust(o, true),
		budget:      newBudget(o.Budget),
		userAgent:   o.UserAgent,
		allOperator: o.Operator,
	}
}

// newTrust makes the transport of one trust level.
func newTrust(o Options, operator bool) trust {
	tr := &http.Transport{
		// No proxy: through one, the address finally connected to is the
		// proxy's choice, and the policy could not be applied to it.
		Proxy:                  nil,
		DialContext:            dialer(o.ConnectTimeout, o.Resolver, operator),
		TLSHandshakeTimeout:    o.ConnectTimeout,
		ResponseHeaderTimeout:  o.HeaderTimeout,
		MaxResponseHeaderBytes: maxHeaderBytes,
		DisableCompression:     true,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	return trust{
		hc:       &http.Client{Transport: tr, CheckRedirect: checkRedirect},
		noFollow: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
}

// MayFollow reports whether a caller that fetched from, with
// NoRedirect, may fetch the Location to it pointed at. The same scheme,
// host and port is always allowed; another host only when CheckHost
// finds it public (a name's addresses are checked again when
// connecting): a Location is the other side's choice, never the
// operator's.
func MayFollow(from, to *url.URL) bool {
	if to.Scheme != "http" && to.Scheme != "https" {
		return false
	}
	if to.Scheme == from.Scheme && strings.EqualFold(to.Hostname(), from.Hostname()) && Port(to) == Port(from) {
		return true
	}
	_, err := CheckHost(to.Hostname())
	return err == nil
}

// checkRedirect follows a redirect only to the same scheme, host and
// port as the URL asked for: anywhere else, a peer could make us probe
// other machines or ports (our own network among them) and read the
// outcome.
func checkRedirect(req *http.Request, via []*http.Request) error {
	from, to := via[0].URL, req.URL
	if to.Scheme != from.Scheme || !strings.EqualFold(to.Hostname(), from.Hostname()) || Port(to) != Port(from) {
		return &Error{Public: RefusedRedirect, Refused: true, Detail: fmt.Sprintf("redirected from %s to %s: a fetch follows a redirect only to the same scheme, host and port; use the URL the document is really at", via[len(via)-1].URL.Redacted(), to.Redacted())}
	}
	if len(via) >= maxRedirects {
		return &Error{Public: RefusedRedirect, Refused: true, Detail: fmt.Sprintf("more than %d redirects from %s", maxRedirects, from.Redacted())}
	}
	return nil
}

// Port is u's port, the scheme's default when it names none (url.Parse
// lower-cases the scheme).
func Port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// Request is one GET (or HEAD, or POST).
type Request struct {
	URL string
	// Method is GET when empty, HEAD (no body is read), or POST: Body is
	// sent, with ContentType, a redirect comes back as it came (as with
	// NoRedirect), and the answer's body is read whatever its status,
	// since a call's refusal comes in it (3gs proposals vote's MCP calls).
	Method string
	// Body and ContentType are a POST's, which needs both, and is sent
	// only when Operator (or Options.Operator) is set.
	Body        []byte
	ContentType string
	// Header holds more request headers to send (a POST's protocol
	// headers); those the policy sets (Accept-Encoding) are not taken.
	Header http.Header
	// NoRedirect returns a redirect's answer, with its status and its
	// Location header, instead of following it.
	NoRedirect bool
	// What the document is, for messages: "registry", "signature".
	What   string
	Accept string
	// IfNoneMatch makes the request conditional; a 304 comes back as a
	// Response with that status and no body.
	IfNoneMatch string
	// Limit bounds the body in bytes; more is refused (RefusedTooLarge).
	Limit int64
	// Operator says the operator chose URL: it came from a flag, or from
	// the registry this node is the origin of (its curator's links,
	// sources and endorsements). Only then may it name a non-public
	// address as a literal IP. Left false, as for anything a followed
	// origin, a peer or a proposal supplied, the host must pass
	// CheckHost, and every address connected to must be public.
	Operator bool
}

// Response is an answer. Body is read only for a 200 to a GET; for any
// other status, and for HEAD, it is nil, and nothing of the other side's body is kept.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	held   int64
	b      *budget
}

// Release returns the bytes the body held in the budget; the body may
// still be used (the budget bounds what is being fetched, not what is
// kept). It may be called more than once.
func (r *Response) Release() {
	if r != nil && r.held > 0 {
		r.b.release(r.held)
		r.held = 0
	}
}

// Get fetches req.URL. An error is always an *Error. For a status other
// than 200 the Response has no body (but a POST's), and the caller
// decides what the status means.
func (c *Client) Get(ctx context.Context, req Request) (*Response, error) {
	resp, err := c.open(ctx, req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := &Response{Status: resp.StatusCode, Header: resp.Header, b: c.budget}
	if resp.StatusCode != http.StatusOK && req.Method != http.MethodPost || req.Method == http.MethodHead {
		return out, nil
	}
	if err := encodingRefused(req, resp); err != nil {
		return nil, err
	}
	cl := resp.ContentLength
	if cl > req.Limit {
		return nil, tooLarge(req, fmt.Sprintf("Content-Length %d", cl))
	}
	// The body's room is taken before a byte is read: the Content-Length
	// when there is one, else the whole limit.
	hold := req.Limit
	if cl >= 0 {
		hold = cl
	}
	// A small body (a signature) is not counted: it costs nothing worth
	// bounding, and a fetch that holds a large body's room while it asks
	// for a small one's could otherwise wait for ever on another doing
	// the same.
	if req.Limit > smallBody {
		hold = c.budget.clamp(hold)
		if err := c.budget.acquire(ctx, hold); err != nil {
			return nil, &Error{Public: Unreachable, Detail: fmt.Sprintf("%s %s: waiting for room in the fetch budget (other fetches held it): %v", req.What, req.URL, err), Err: err}
		}
		out.held = hold
	}
	body, err := readBody(resp.Body, cl, req.Limit)
	if err != nil {
		out.Release()
		if errors.Is(err, errTooLarge) {
			return nil, tooLarge(req, fmt.Sprintf("more than %d bytes", req.Limit))
		}
		return nil, c.failure(req, err)
	}
	out.Body = body
	return out, nil
}

// Stream is an answer whose body is read as it comes (an audit log,
// checked line by line), within req.Limit bytes.
type Stream struct {
	Status int
	Header http.Header
	// Body is nil for a status other than 200.
	Body io.ReadCloser
}

// Open fetches req.URL for reading as it comes. The caller closes Body.
// Reading past req.Limit fails with RefusedTooLarge.
func (c *Client) Open(ctx context.Context, req Request) (*Stream, error) {
	resp, err := c.open(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &Stream{Status: resp.StatusCode, Header: resp.Header}
	if resp.StatusCode != http.StatusOK || req.Method == http.MethodHead {
		resp.Body.Close()
		return out, nil
	}
	if err := encodingRefused(req, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	if resp.ContentLength > req.Limit {
		resp.Body.Close()
		return nil, tooLarge(req, fmt.Sprintf("Content-Length %d", resp.ContentLength))
	}
	out.Body = &limited{c: c, req: req, rc: resp.Body, left: req.Limit}
	return out, nil
}

// open sends req and returns the answer's headers.
func (c *Client) open(ctx context.Context, req Request) (*http.Response, error) {
	method := http.MethodGet
	var body io.Reader
	switch req.Method {
	case "", http.MethodGet:
	case http.MethodHead:
		method = http.MethodHead
	case http.MethodPost:
		// Only what the operator asked for is posted to, and only a body
		// said to be something: a link check or a peer's fetch never
		// posts, whatever it is given.
		if !req.Operator && !c.allOperator || req.Body == nil || req.ContentType == "" {
			return nil, &Error{Public: Unreachable, Detail: fmt.Sprintf("%s URL %s: a POST is sent only to the operator's URL (Request.Operator), with a Body and its ContentType", req.What, req.URL)}
		}
		method, body = http.MethodPost, bytes.NewReader(req.Body)
	default:
		return nil, &Error{Public: Unreachable, Detail: fmt.Sprintf("%s URL %s: method %q: only GET, HEAD and POST are sent", req.What, req.URL, req.Method)}
	}
	hr, err := http.NewRequestWithContext(ctx, method, req.URL, body)
	if err != nil {
		return nil, &Error{Public: Unreachable, Detail: fmt.Sprintf("%s URL %s: %v", req.What, req.URL, err), Err: err}
	}
	if hr.URL.Scheme != "http" && hr.URL.Scheme != "https" {
		return nil, &Error{Public: Unreachable, Detail: fmt.Sprintf("%s URL %s: only http and https are fetched", req.What, req.URL)}
	}
	t := c.public
	// The operator's exemption is for a literal address as the operator
	// wrote it, in ASCII: a host that is not ASCII is mapped (UTS 46) by
	// the HTTP client before the dial sees it, so the dial could take
	// 127.0.0.１ for the literal 127.0.0.1. Such a host is judged as
	// anyone else's.
	if (req.Operator || c.allOperator) && ascii(hr.URL.Hostname()) {
		t = c.operator
	} else if _, err := CheckHost(hr.URL.Hostname()); err != nil {
		return nil, &Error{Public: RefusedAddress, Refused: true, Detail: fmt.Sprintf("%s URL %s: %v; only a URL the operator gave (a flag, or the registry of the node that is its origin) may name such a host", req.What, hr.URL.Redacted(), err), Err: err}
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			hr.Header.Add(k, v)
		}
	}
	if req.ContentType != "" {
		hr.Header.Set("Content-Type", req.ContentType)
	}
	if req.Accept != "" {
		hr.Header.Set("Accept", req.Accept)
	}
	hr.Header.Set("Accept-Encoding", "identity")
	if c.userAgent != "" {
		hr.Header.Set("User-Agent", c.userAgent)
	}
	if req.IfNoneMatch != "" {
		hr.Header.Set("If-None-Match", req.IfNoneMatch)
	}
	hc := t.hc
	if req.NoRedirect || method == http.MethodPost {
		hc = t.noFollow
	}
	resp, err := hc.Do(hr)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, c.failure(req, err)
	}
	return resp, nil
}

// encodingRefused refuses a body in any encoding but identity: it was
// asked for as sent, and decoding one would let a few bytes on the wire
// become any amount in memory.
func encodingRefused(req Request, resp *http.Response) error {
	for _, v := range resp.Header.Values("Content-Encoding") {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" && !strings.EqualFold(e, "identity") {
				return &Error{Public: RefusedEncoding, Refused: true, Detail: fmt.Sprintf("%s %s: Content-Encoding %.40q: only identity is accepted (the request said Accept-Encoding: identity); serve the document uncompressed", req.What, req.URL, v)}
			}
		}
	}
	return nil
}

func tooLarge(req Request, what string) error {
	return &Error{Public: RefusedTooLarge, Refused: true, Detail: fmt.Sprintf("%s %s: %s, over the %d-byte limit", req.What, req.URL, what, req.Limit)}
}

// failure is the *Error for err, met while fetching req.
func (c *Client) failure(req Request, err error) error {
	var fe *Error
	if errors.As(err, &fe) {
		return &Error{Public: fe.Public, Refused: fe.Refused, Detail: fmt.Sprintf("%s %s: %s", req.What, req.URL, fe.Detail), Err: err}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Public: Unreachable, Detail: fmt.Sprintf("%s %s: no complete answer in time", req.What, req.URL), Err: err}
	}
	return &Error{Public: Unreachable, Detail: fmt.Sprintf("%s %s: %v", req.What, req.URL, err), Err: err}
}

var errTooLarge = errors.New("over the limit")

// firstChunk is the buffer a body of unknown length starts with.
const firstChunk = 64 << 10

// readBody reads r whole into one buffer: of exactly cl bytes when the
// length is known (cl >= 0; net/http ends the body there), else starting
// small and doubling, never past limit+1 (the one byte that tells a body
// over the limit from one exactly at it). A buffer left much larger than
// its body is copied to its size, since a registry keeps its bytes for as
// long as it is served.
func readBody(r io.Reader, cl, limit int64) ([]byte, error) {
	if cl >= 0 {
		buf := make([]byte, cl)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	buf := make([]byte, 0, min(limit+1, firstChunk))
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, errTooLarge
			}
			grown := make([]byte, len(buf), min(limit+1, 2*int64(cap(buf))))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, errTooLarge
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if cap(buf)-len(buf) > len(buf)/4 {
		buf = append([]byte(nil), buf...)
	}
	return buf, nil
}

// limited is a Stream's body: more than the limit is refused.
type limited struct {
	c    *Client
	req  Request
	rc   io.ReadCloser
	left int64
}

func (l *limited) Read(p []byte) (int, error) {
	// One byte past the limit tells a body that is too long from one
	// that ends exactly there.
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return 0, tooLarge(l.req, fmt.Sprintf("more than %d bytes", l.req.Limit))
	}
	if err != nil && err != io.EOF {
		return n, l.c.failure(l.req, err)
	}
	return n, err
}

func (l *limited) Close() error { return l.rc.Close() }
