package linkcheck

import (
	"context"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/three-good-sources/3gs/internal/fetch"
)

// hostKey is a URL's host as written, told apart from others by name (or
// literal) and port: what NetworkDown counts as one host.
func hostKey(raw string) string {
	name, port := hostPort(raw)
	return name + ":" + port
}

// hostPort is a URL's host as written, lower case and without a trailing
// dot, and its port; for a URL without a host, "?" and the URL.
func hostPort(raw string) (name, port string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "?" + raw, ""
	}
	return strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")), fetch.Port(u)
}

// serverKeys are what politeness counts each target by: the address its
// host resolves to, and its port. One server is one slot however its
// URLs spell it: 127.0.0.1, [::ffff:127.0.0.1], [::ffff:7f00:1] and a
// name resolving there are all 127.0.0.1. A name resolving to several
// addresses counts as its lowest one; a name that does not resolve (or
// every name, without o.Resolver) is keyed by its spelling, and its
// fetch finds out what is wrong.
func serverKeys(ctx context.Context, targets []Target, o *Options) []string {
	type host struct{ name, port string }
	hosts := make([]host, len(targets))
	addrs := map[string]netip.Addr{} // by name, filled below
	var names []string
	for i, t := range targets {
		name, port := hostPort(t.URL)
		hosts[i] = host{name, port}
		if port == "" {
			continue
		}
		if a, err := netip.ParseAddr(name); err == nil {
			addrs[name] = a.WithZone("").Unmap()
		} else if _, seen := addrs[name]; !seen && o.Resolver != nil {
			addrs[name] = netip.Addr{}
			names = append(names, name)
		}
	}
	resolve(ctx, names, addrs, o)
	keys := make([]string, len(targets))
	for i, h := range hosts {
		if a := addrs[h.name]; a.IsValid() {
			keys[i] = a.String() + "|" + h.port
		} else {
			keys[i] = h.name + "|" + h.port
		}
	}
	return keys
}

// resolve looks up names with o.Resolver, o.Concurrency at a time, each
// within o.Timeout (at most fetch.DefaultConnectTimeout: a resolver that
// does not answer must not hold the check up for long before it starts),
// and sets each that resolves to its lowest address in addrs.
func resolve(ctx context.Context, names []string, addrs map[string]netip.Addr, o *Options) {
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(o.Concurrency, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				lctx, cancel := context.WithTimeout(ctx, min(o.Timeout, fetch.DefaultConnectTimeout))
				found, err := o.Resolver.LookupNetIP(lctx, "ip", name)
				cancel()
				if err != nil || len(found) == 0 {
					continue
				}
				for j := range found {
					found[j] = found[j].WithZone("").Unmap()
				}
				mu.Lock()
				addrs[name] = slices.MinFunc(found, func(a, b netip.Addr) int { return a.Compare(b) })
				mu.Unlock()
			}
		}()
	}
	for _, n := range names {
		if ctx.Err() != nil {
			break
		}
		work <- n
	}
	close(work)
	wg.Wait()
}

// Outage is how many of a check's hosts (told apart by hostKey) could not
// be reached at all.
type Outage struct {
	// Hosts checked; Failed of them could not be resolved or connected
	// to for any of their URLs; Answered of them sent an HTTP answer to
	// at least one.
	Hosts, Failed, Answered int
}

// Thresholds of NetworkDown: at least minHosts hosts, and downShare
// percent or more of them failed before any answer.
const (
	minHosts  = 3
	downShare = 90
)

// NetworkDown tells whether results look like a check run without a
// network (no DNS, every name answered not-found, no route, connections
// refused everywhere) rather than like sources that are gone: at least
// three hosts were checked and 90% or more of them could not be resolved
// or connected to. One host that answers (a source on the local network,
// or in /etc/hosts, while DNS is down) does not make a run of fifty
// failures a verdict on fifty sources. A host the address policy refused
// says nothing about the network and is left out of the count. Such a run
// says nothing about the sources; its gone and error results are to be
// thrown away. With fewer hosts a check cannot tell the two apart, and
// its results stand.
func NetworkDown(results []Result) (Outage, bool) {
	type fate struct{ answered, reached, refused bool }
	byHost := map[string]*fate{}
	for _, r := range results {
		k := hostKey(r.URL)
		f := byHost[k]
		if f == nil {
			f = &fate{}
			byHost[k] = f
		}
		if r.HTTPStatus != 0 {
			f.answered = true
		}
		switch {
		case r.NoNetwork:
		case r.Reason == fetch.RefusedAddress:
			f.refused = true
		default:
			f.reached = true
		}
	}
	var o Outage
	for _, f := range byHost {
		if f.refused && !f.reached && !f.answered {
			continue
		}
		o.Hosts++
		if f.answered {
			o.Answered++
		}
		if !f.reached && !f.answered {
			o.Failed++
		}
	}
	return o, o.Hosts >= minHosts && o.Failed*100 >= o.Hosts*downShare
}
