package linkcheck

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// The reasons of a redirect that leads nowhere a check may go.
const (
	// RedirectLoop: a redirect leads back to a URL already asked in this
	// check (to itself, or back and forth between pages).
	RedirectLoop = "redirect loop"
	// TooManyRedirects: more than maxHops redirects, none of them back.
	TooManyRedirects = "too many redirects"
	// RedirectRefused: a redirect to another scheme (file:, ftp:,
	// javascript:, data:) or to an address fetch.MayFollow refuses (a
	// loopback, private or link-local literal another host named), or to
	// a name that resolved to one.
	RedirectRefused = "redirected to a refused address"
)

// attempt is one check of t: HEAD, a GET when HEAD is refused, and the
// redirects after a first one, to see where they lead. A positive
// duration asks for a retry after it (a 429 or 503 with Retry-After).
//
// A redirect is followed only where a page may be read (MayFollow), at
// most maxHops times and never back to a URL already asked: a loop, a
// chain past the bound or a refused Location is an error, never ok, as
// no page was reached. HTTPStatus is the last answer's, that of the page
// finally reached (but for a permanent move, the move's).
func attempt(ctx context.Context, o *Options, t Target) (Result, time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	r := Result{Size: -1}
	cur, err := url.Parse(t.URL)
	if err != nil || (cur.Scheme != "http" && cur.Scheme != "https") || cur.Host == "" {
		r.Status, r.Reason = Error, "not an http(s) URL"
		return r, 0
	}
	permanent := true // every redirect so far was permanent
	moved := ""       // where the leading permanent redirects lead
	first := 0        // the first answer's status
	asked := map[string]bool{cur.String(): true}
	for hop := 0; ; hop++ {
		a, err := ask(ctx, o, cur.String())
		if err != nil {
			r.Status, r.Reason = failure(err)
			o.Log(fmt.Sprintf("check %s: %v", t.URL, err))
			switch {
			case hop == 0:
				r.NoNetwork = networkFailure(err)
			case refused(err):
				r.Reason = RedirectRefused
			case r.Status == Gone:
				r.Reason = "redirects to a page that is " + r.Reason
			}
			return r, 0
		}
		if hop == 0 {
			first = a.status
		}
		r.HTTPStatus = a.status
		switch {
		case a.status >= 300 && a.status < 400 && a.status != http.StatusNotModified:
			loc := a.header.Get("Location")
			next, err := cur.Parse(loc)
			if loc == "" || err != nil {
				r.Status, r.Reason = Error, "http "+strconv.Itoa(a.status)+" without a usable Location"
				return r, 0
			}
			next.Fragment = ""
			isPermanent := a.status == http.StatusMovedPermanently || a.status == http.StatusPermanentRedirect
			if permanent && isPermanent {
				moved = next.String()
			} else {
				permanent = false
			}
			why := ""
			switch {
			case !fetch.MayFollow(cur, next):
				why = RedirectRefused
			case asked[next.String()]:
				why = RedirectLoop
			case hop+1 >= maxHops:
				why = TooManyRedirects
			}
			if why != "" {
				r.Status, r.Reason = Error, why
				o.Log(fmt.Sprintf("check %s: %s (http %d from %s to %.300q)", t.URL, why, a.status, cur.Redacted(), loc))
				return r, 0
			}
			asked[next.String()] = true
			cur = next
			continue
		case a.status >= 200 && a.status < 300:
			r.Title, r.Size = a.title, a.size
			if moved != "" && moved != t.URL {
				r.Status, r.Reason, r.Location, r.LocationAnswered, r.HTTPStatus = Redirected, "http "+strconv.Itoa(first), moved, true, first
			} else {
				r.Status = OK
			}
			return r, 0
		case a.status == http.StatusNotFound || a.status == http.StatusGone:
			r.Status, r.Reason = Gone, "http "+strconv.Itoa(a.status)
			if hop > 0 {
				r.Reason = "redirects to a page that is " + r.Reason
			}
			return r, 0
		case a.status == http.StatusTooManyRequests || a.status == http.StatusServiceUnavailable:
			r.Status, r.Reason = Error, "http "+strconv.Itoa(a.status)
			return r, retryAfter(a.header.Get("Retry-After"), o.Now())
		default:
			r.Status, r.Reason = Error, "http "+strconv.Itoa(a.status)
			return r, 0
		}
	}
}

type answer struct {
	status int
	header http.Header
	title  string
	size   int64
}

// ask sends HEAD to u, and a GET when HEAD is refused or when a page
// answers HEAD with a success: the GET reads at most bodyPrefix bytes,
// for the title. Redirects come back as they are.
func ask(ctx context.Context, o *Options, u string) (answer, error) {
	resp, err := o.Client.Get(ctx, fetch.Request{URL: u, What: "source", Method: http.MethodHead, NoRedirect: true, Accept: "text/html,*/*;q=0.8"})
	if err != nil {
		return answer{}, err
	}
	a := answer{status: resp.Status, header: resp.Header, size: contentLength(resp.Header)}
	wantTitle := a.status >= 200 && a.status < 300 && strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "html")
	if a.status != http.StatusMethodNotAllowed && a.status != http.StatusNotImplemented && !wantTitle {
		return a, nil
	}
	// A bounded GET: the stream is read no further than bodyPrefix, and
	// Limit is only there because Open requires one.
	s, err := o.Client.Open(ctx, fetch.Request{URL: u, What: "source", NoRedirect: true, Accept: "text/html,*/*;q=0.8", Limit: 1 << 50})
	if err != nil {
		if wantTitle {
			return a, nil // HEAD said it is there; the title is a bonus
		}
		return answer{}, err
	}
	g := answer{status: s.Status, header: s.Header, size: contentLength(s.Header)}
	if s.Body != nil {
		buf, _ := io.ReadAll(io.LimitReader(s.Body, bodyPrefix))
		s.Body.Close()
		g.title = title(buf)
	}
	if wantTitle && g.status != a.status {
		return a, nil
	}
	return g, nil
}

func contentLength(h http.Header) int64 {
	n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// title is the text of the first <title> element in page, whitespace
// collapsed, entities decoded and hidden characters removed
// (textnorm.Visible: the page's author chose them, and the title is kept
// and published in the health file), at most maxTitle runes.
func title(page []byte) string {
	low := strings.ToLower(string(page))
	i := strings.Index(low, "<title")
	if i < 0 {
		return ""
	}
	gt := strings.IndexByte(low[i:], '>')
	if gt < 0 {
		return ""
	}
	start := i + gt + 1
	end := strings.Index(low[start:], "</title")
	if end < 0 {
		return ""
	}
	t := strings.Join(strings.Fields(textnorm.Visible(html.UnescapeString(string(page[start:start+end])))), " ")
	if r := []rune(t); len(r) > maxTitle {
		t = string(r[:maxTitle])
	}
	return t
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
// Zero when absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(min(n, 86400)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), 24*time.Hour)
	}
	return 0
}

// failure classifies a fetch that got no answer.
func failure(err error) (Status, string) {
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return Gone, "name does not resolve"
	}
	var fe *fetch.Error
	if errors.As(err, &fe) && fe.Refused {
		return Error, fe.Public
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Error, "timeout"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Error, "timeout"
	}
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		record    tls.RecordHeaderError
		alert     tls.AlertError
		ech       *tls.ECHRejectionError
	)
	if errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify) ||
		errors.As(err, &record) || errors.As(err, &alert) || errors.As(err, &ech) {
		return Error, "tls"
	}
	return Error, fetch.Unreachable
}

// refused reports whether err is the address policy refusing a
// connection (a name that resolved to a non-public address).
func refused(err error) bool {
	var fe *fetch.Error
	return errors.As(err, &fe) && fe.Refused
}

// networkFailure reports whether err came before any server answered:
// the name did not resolve (for whatever reason, the resolver's own
// failure included) or the connection was not made (refused, no route,
// timed out). A refusal by the address policy is not one: the network
// worked, the address was not allowed.
func networkFailure(err error) bool {
	if refused(err) {
		return false
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// changed says why r looks like another page than p described: its title
// changed, or its size is less than a third or more than three times what
// it was (and by more than 2 KiB). Empty when it looks the same.
func changed(p Previous, r Result) string {
	if p.Title != "" && r.Title != "" && !strings.EqualFold(p.Title, r.Title) {
		return "title changed"
	}
	if p.Size > 0 && r.Size >= 0 {
		lo, hi := min(p.Size, r.Size), max(p.Size, r.Size)
		if hi-lo > 2048 && hi > 3*lo {
			return "size changed"
		}
	}
	return ""
}
