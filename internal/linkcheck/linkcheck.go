// Package linkcheck checks that a registry's source URLs still answer,
// and says how each one fared: ok, redirected (moved permanently, with
// where to), gone (404, 410, or a name that no longer resolves), error
// (a server error, TLS failure, timeout, no connection) or changed (the
// page answers, but its title or size moved far from the previous check).
//
// Every request goes through the guarded client of internal/fetch (the
// address policy applies to each connection), asks with HEAD first and
// with a GET of at most a few KiB when HEAD is refused, and is polite:
// at most PerHost requests in flight to one server (keyed by the address
// its name resolves to, however a URL spells it), Delay between the
// requests of each, at most Concurrency in all, and a Retry-After
// honoured up to MaxRetryAfter.
package linkcheck

import (
	"context"
	"fmt"
	"net"
	"sort"
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
	// "name does not resolve", "refused: address not allowed", or one of
	// the redirect reasons (RedirectLoop, TooManyRedirects,
	// RedirectRefused). Empty for OK.
	Reason string
	// HTTPStatus is the last answer's status: that of the page finally
	// reached through redirects, or of the redirect a check stopped at;
	// for Redirected, that of the move (301 or 308); 0 when none came.
	HTTPStatus int
	// Location is, for Redirected, the URL the source moved to.
	Location string
	// LocationAnswered: the page at Location (or where temporary
	// redirects from it led) was fetched and answered with a success.
	// Always so for Redirected: a move to where a check does not follow
	// is an error.
	LocationAnswered bool
	// NoNetwork: the URL's own host could not be resolved or connected
	// to, so no server answered at all (see NetworkDown).
	NoNetwork bool
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
	// PerHost bounds the requests in flight to one server (the address
	// the URL's host resolves to, and the port), Delay separates the requests each of those makes, and
	// Concurrency bounds the requests in flight in all.
	PerHost     int
	Delay       time.Duration
	Concurrency int
	// Resolver resolves host names for politeness, so names and spellings
	// of one address share its bound; it should be the one the Client
	// dials with. Nil resolves nothing: names are then told apart by
	// spelling (IP literals are still keyed by address).
	Resolver *net.Resolver
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
		o.Client = fetch.New(fetch.Options{ConnectTimeout: min(o.Timeout, fetch.DefaultConnectTimeout), HeaderTimeout: o.Timeout, Resolver: o.Resolver})
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

// lane is a share of one host's targets, checked one after another.
type lane struct{ idx []int }

// Check checks every target and returns the results in the targets'
// order. When ctx ends, the sources not yet checked are left out.
func Check(ctx context.Context, targets []Target, o Options) []Result {
	o.fill()
	// Each server's targets are dealt into at most PerHost lanes; a lane
	// runs its targets one after another, Delay apart, so no more than
	// PerHost requests are ever in flight to one server.
	keys := serverKeys(ctx, targets, &o)
	byHost := map[string][]int{}
	var hosts []string
	for i := range targets {
		k := keys[i]
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
