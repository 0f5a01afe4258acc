// Package linkcheck checks that a registry's source URLs still answer,
// and says how each one fared: ok, redirected (moved permanently, with
// where to), gone (404, 410, or a name that no longer resolves), error
// (a server error, TLS failure, timeout, no connection) or changed (the
// page answers, but its title or size moved far from the previous check).
//
// Every request goes through the guarded client of internal/fetch (the
// address policy applies to each connection), asks with HEAD first and
// with a GET of at most a few KiB when HEAD is refused, and is polite:
// at most PerHost requests in flight to one host, Delay between the
// requests of each, at most Concurrency in all, and a Retry-After
// honoured up to MaxRetryAfter.
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
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/internal/fetch"
)

// Status is how a source fared.
type Status string

// The statuses, in the order a report lists them.
const (
	OK         Status = "ok"
	Redirected Status = "redirected"
	Gone       Status = "gone"
	Error      Status = "error"
	Changed    Status = "changed"
)

// Target is one source to check.
type Target struct {
	Category string
	Rank     int
	URL      string
}

// Result is how one Target fared.
type Result struct {
	Target
	Status Status
	// Reason is coarse: "http 404", "timeout", "tls", "unreachable",
	// "name does not resolve", "refused: address not allowed". Empty for OK.
	Reason string
	// HTTPStatus is the first answer's status, 0 when none came.
	HTTPStatus int
	// Location is, for Redirected, the URL the source moved to.
	Location string
	// LocationAnswered: the page at Location (or where temporary
	// redirects from it led) was fetched and answered with a success.
	// False when the move pointed where a check does not follow (another
	// host's non-public address, or past the redirect bound).
	LocationAnswered bool
	// Title is the page's <title>, when a GET read one.
	Title string
	// Size is the Content-Length, -1 when not given.
	Size      int64
	CheckedAt time.Time
}

// Previous is what the last check saw of a URL, for Changed.
type Previous struct {
	Title string
	Size  int64 // -1 when unknown
}

// Options tune a check. Zero values take the defaults below.
type Options struct {
	Client *fetch.Client
	// PerHost bounds the requests in flight to one host (scheme, name and
	// port), Delay separates the requests each of those makes, and
	// Concurrency bounds the requests in flight in all.
	PerHost     int
	Delay       time.Duration
	Concurrency int
	// Timeout bounds the whole check of one URL, redirects included.
	Timeout time.Duration
	// MaxRetryAfter bounds the wait a Retry-After asks for; a longer one
	// is waited this long. A source is retried once.
	MaxRetryAfter time.Duration
	// Previous maps a URL to what the last check saw of it.
	Previous map[string]Previous
	// Progress, when set, is called after each source with the number
	// done so far and the results' counts by status.
	Progress func(done, total int, counts map[Status]int)
	// Log receives the detail of each failure, for the operator.
	Log func(msg string)
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// sleep waits d or until ctx ends; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// Defaults.
const (
	DefaultPerHost       = 1
	DefaultDelay         = time.Second
	DefaultConcurrency   = 8
	DefaultTimeout       = 15 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
	// bodyPrefix is how much of a page a GET reads, for its title.
	bodyPrefix = 32 << 10
	// maxHops bounds the redirects followed to find where a page went.
	maxHops = 5
	// maxTitle bounds a title kept, in runes.
	maxTitle = 200
)

func (o *Options) fill() {
	if o.PerHost <= 0 {
		o.PerHost = DefaultPerHost
	}
	if o.Delay < 0 {
		o.Delay = 0
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = func(string) {}
	}
	if o.sleep == nil {
		o.sleep = Sleep
	}
	if o.Client == nil {
		o.Client = fetch.New(fetch.Options{ConnectTimeout: min(o.Timeout, fetch.DefaultConnectTimeout), HeaderTimeout: o.Timeout})
	}
}

// Sleep waits d, or until ctx ends (then its error).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hostKey is what politeness counts by: scheme, host and port.
func hostKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "?" + raw
	}
	p := u.Port()
	if p == "" {
		p = map[string]string{"https": "443"}[u.Scheme]
		if p == "" {
			p = "80"
		}
	}
	return strings.ToLower(u.Scheme + "://" + u.Hostname() + ":" + p)
}

// lane is a share of one host's targets, checked one after another.
type lane struct{ idx []int }

// Check checks every target and returns the results in the targets'
// order. When ctx ends, the sources not yet checked are left out.
func Check(ctx context.Context, targets []Target, o Options) []Result {
	o.fill()
	// Each host's targets are dealt into at most PerHost lanes; a lane
	// runs its targets one after another, Delay apart, so no more than
	// PerHost requests are ever in flight to one host.
	byHost := map[string][]int{}
	var hosts []string
	for i, t := range targets {
		k := hostKey(t.URL)
		if _, ok := byHost[k]; !ok {
			hosts = append(hosts, k)
		}
		byHost[k] = append(byHost[k], i)
	}
	var lanes []lane
	for _, h := range hosts {
		idx := byHost[h]
		n := min(o.PerHost, len(idx))
		start := len(lanes)
		for range n {
			lanes = append(lanes, lane{})
		}
		for j, i := range idx {
			l := &lanes[start+j%n]
			l.idx = append(l.idx, i)
		}
	}
	// The longest lanes first, so one busy host does not finish last.
	sort.SliceStable(lanes, func(a, b int) bool { return len(lanes[a].idx) > len(lanes[b].idx) })

	results := make([]Result, len(targets))
	filled := make([]bool, len(targets))
	var mu sync.Mutex
	done, counts := 0, map[Status]int{}
	record := func(i int, r Result) {
		mu.Lock()
		defer mu.Unlock()
		results[i], filled[i] = r, true
		done++
		counts[r.Status]++
		if o.Progress != nil {
			o.Progress(done, len(targets), counts)
		}
	}

	work := make(chan *lane)
	var wg sync.WaitGroup
	for range min(o.Concurrency, max(len(lanes), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range work {
				for k, i := range l.idx {
					if k > 0 && o.sleep(ctx, o.Delay) != nil {
						break
					}
					if ctx.Err() != nil {
						break
					}
					record(i, checkOne(ctx, &o, targets[i]))
				}
			}
		}()
	}
feed:
	for i := range lanes {
		select {
		case work <- &lanes[i]:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	out := results[:0]
	for i, r := range results {
		if filled[i] {
			out = append(out, r)
		}
	}
	return out
}

// checkOne checks one target within o.Timeout, retrying once after a
// Retry-After.
func checkOne(ctx context.Context, o *Options, t Target) Result {
	r, retryAfter := attempt(ctx, o, t)
	if retryAfter > 0 && ctx.Err() == nil {
		wait := min(retryAfter, o.MaxRetryAfter)
		o.Log(fmt.Sprintf("%s asked to retry after %s; waiting %s", t.URL, retryAfter, wait))
		if o.sleep(ctx, wait) == nil {
			r, _ = attempt(ctx, o, t)
		}
	}
	r.Target = t
	r.CheckedAt = o.Now().UTC()
	if r.Status == OK && o.Previous != nil {
		if p, ok := o.Previous[t.URL]; ok {
			if why := changed(p, r); why != "" {
				r.Status, r.Reason = Changed, why
			}
		}
	}
	return r
}

// attempt is one check of t: HEAD, a GET when HEAD is refused, and the
// redirects after a first one, to see where they lead. A positive
// duration asks for a retry after it (a 429 or 503 with Retry-After).
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
	for hop := 0; ; hop++ {
		a, err := ask(ctx, o, cur.String())
		if err != nil {
			r.Status, r.Reason = failure(err)
			o.Log(fmt.Sprintf("check %s: %v", t.URL, err))
			if hop > 0 && r.Status == Gone {
				r.Reason = "redirects to a page that is " + r.Reason
			}
			return r, 0
		}
		if hop == 0 {
			r.HTTPStatus = a.status
		}
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
			if hop+1 >= maxHops || !fetch.MayFollow(cur, next) {
				// Where it leads cannot be checked: report the move itself.
				if moved != "" {
					r.Status, r.Reason, r.Location = Redirected, "http "+strconv.Itoa(r.HTTPStatus), moved
				} else {
					r.Status = OK
				}
				if hop+1 >= maxHops {
					o.Log(fmt.Sprintf("check %s: more than %d redirects", t.URL, maxHops))
				}
				return r, 0
			}
			cur = next
			continue
		case a.status >= 200 && a.status < 300:
			r.Title, r.Size = a.title, a.size
			if moved != "" && moved != t.URL {
				r.Status, r.Reason, r.Location, r.LocationAnswered = Redirected, "http "+strconv.Itoa(r.HTTPStatus), moved, true
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
// collapsed and entities decoded, at most maxTitle runes.
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
	t := strings.Join(strings.Fields(html.UnescapeString(string(page[start:start+end]))), " ")
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
