package proposals

import (
	clist "container/list"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Defaults of the limiter's flags.
const (
	// DefaultRate is --proposal-rate's default: proposals one client may
	// have recorded per hour.
	DefaultRate = 10
	// DefaultTotalRate is --proposal-rate-total's default: proposals the
	// server records per hour from all clients together, what one curator
	// can read.
	DefaultTotalRate = 200
	// DefaultIPv6Prefix is --proposal-ipv6-prefix's default: an IPv6
	// client is its /64, the least a site is given and what one host
	// picks its addresses from, so that rotating them gains nothing.
	DefaultIPv6Prefix = 64
	// InvalidFactor sets the allowance of invalid proposals: an invalid
	// proposal costs its sender no recorded proposal, but checking it
	// costs the server a whole registry check (a second or so at 100,000
	// categories), so a client may send InvalidFactor times --proposal-rate
	// of them an hour. An agent correcting its arguments from the messages
	// needs a few tries, not hundreds. There is no server-wide bound on
	// them: it would be checked before a proposal is known to be valid,
	// so many addresses sending invalid ones could lock every honest
	// proposer out; --max-concurrent bounds the checks running at once.
	InvalidFactor = 3
)

// maxClients bounds the clients a Limiter remembers. Past it the client
// charged least recently is forgotten, so a flood of addresses costs
// memory no more than this and never locks a newcomer out.
const maxClients = 10000

// Limiter allows each client Rate recorded proposals per Window, and all
// clients together Total. Only a proposal that is recorded is charged:
// Take reserves one and Refund gives it back when the proposal turns out
// invalid or is not recorded, so a flood of invalid proposals costs no
// one their allowance.
type Limiter struct {
	Rate, Total int
	// Invalid counts the proposals that were checked and found invalid,
	// with its own, larger allowance per client (InvalidFactor times this
	// one's, and no server-wide bound):
	// they are not recorded, but each cost a registry check. Nil in the
	// Invalid limiter itself.
	Invalid *Limiter
	// invalid marks the Invalid limiter, for its refusals' words.
	invalid bool
	// IPv6Prefix is the prefix length an IPv6 client is counted by.
	IPv6Prefix int
	Window     time.Duration
	mu         sync.Mutex
	// clients holds, by key, the times of the client's charged
	// proposals in the window, oldest first; lru orders them, least
	// recently charged at the front.
	clients map[string]*clist.Element
	lru     *clist.List
	// total is the times of every charged proposal in the window.
	total []time.Time
}

type client struct {
	key, who string
	times    []time.Time
}

// NewLimiter allows rate recorded proposals per hour per client and total
// from all clients; an IPv6 client is its /v6prefix. Zeros mean the
// defaults.
func NewLimiter(rate, total, v6prefix int) *Limiter {
	if rate <= 0 {
		rate = DefaultRate
	}
	if total <= 0 {
		total = DefaultTotalRate
	}
	if v6prefix <= 0 || v6prefix > 128 {
		v6prefix = DefaultIPv6Prefix
	}
	l := newLimiter(rate, total, v6prefix)
	l.Invalid = newLimiter(InvalidFactor*rate, math.MaxInt, v6prefix)
	l.Invalid.invalid = true
	return l
}

func newLimiter(rate, total, v6prefix int) *Limiter {
	return &Limiter{Rate: rate, Total: total, IPv6Prefix: v6prefix, Window: time.Hour, clients: map[string]*clist.Element{}, lru: clist.New()}
}

// Client is who makes a call: the peer address without its port, and the
// session; both empty for the one stdio client.
type Client struct{ Addr, Session string }

// Refusal says what was counted when Take refuses.
type Refusal struct {
	// Who is the client counted ("address 192.0.2.1", "IPv6 /64
	// 2001:db8::/64", "session …"); empty when the server-wide total
	// refused.
	Who string
	// Count is the proposals recorded in the last Window; Most the bound.
	Count, Most int
	Window      time.Duration
	// Retry is when a proposal would be counted again.
	Retry time.Duration
	// Invalid: what was counted is proposals checked and found invalid.
	Invalid bool
}

// Error says what was refused without naming the server's settings: the
// tools word a Refusal for the caller (internal/tools, rateRefusal).
func (r *Refusal) Error() string {
	switch {
	case r.Invalid:
		return fmt.Sprintf("%s sent %d invalid proposals in the last %s, the most checked from one client; retry in %s", r.Who, r.Count, hours(r.Window), wait(r.Retry))
	case r.Who == "":
		return fmt.Sprintf("%d proposals recorded from all clients in the last %s, the most taken; retry in %s", r.Count, hours(r.Window), wait(r.Retry))
	}
	return fmt.Sprintf("%s recorded %d proposals in the last %s, the most taken from one client; retry in %s", r.Who, r.Count, hours(r.Window), wait(r.Retry))
}

// Hours is how a window is said in a message: "hour", or its length.
func Hours(d time.Duration) string { return hours(d) }

// Wait is how a time to wait is said in a message.
func Wait(d time.Duration) string { return wait(d) }

func hours(d time.Duration) string {
	if d == time.Hour {
		return "hour"
	}
	return d.String()
}

// wait words a time to wait, rounded up: "37m", "20s".
func wait(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%ds", int((d+time.Second-1)/time.Second))
	}
	return fmt.Sprintf("%dm", int((d+time.Minute-1)/time.Minute))
}

// Charge is a proposal Take reserved; Refund gives it back.
type Charge struct {
	l    *Limiter
	keys []string
	at   time.Time
}

// Take reserves one proposal from the allowance of c (its address and its
// session) and of the server at now. When one has none left it takes
// nothing and says which, with the count and when to retry.
func (l *Limiter) Take(now time.Time, c Client) (*Charge, *Refusal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total = since(l.total, now.Add(-l.Window))
	if len(l.total) >= l.Total {
		return nil, &Refusal{Count: len(l.total), Most: l.Total, Window: l.Window, Retry: l.total[0].Add(l.Window).Sub(now), Invalid: l.invalid}
	}
	ids := l.identities(c)
	for _, id := range ids {
		e := l.clients[id.key]
		if e == nil {
			continue
		}
		cl := e.Value.(*client)
		cl.times = since(cl.times, now.Add(-l.Window))
		if len(cl.times) >= l.Rate {
			return nil, &Refusal{Who: cl.who, Count: len(cl.times), Most: l.Rate, Window: l.Window, Retry: cl.times[0].Add(l.Window).Sub(now), Invalid: l.invalid}
		}
	}
	ch := &Charge{l: l, at: now}
	for _, id := range ids {
		e := l.clients[id.key]
		if e == nil {
			if l.lru.Len() >= maxClients {
				l.forget(l.lru.Front())
			}
			e = l.lru.PushBack(&client{key: id.key, who: id.who})
			l.clients[id.key] = e
		} else {
			l.lru.MoveToBack(e)
		}
		cl := e.Value.(*client)
		cl.times = append(cl.times, now)
		ch.keys = append(ch.keys, id.key)
	}
	l.total = append(l.total, now)
	return ch, nil
}

// Refund gives back what Take reserved: the proposal was not recorded. A
// nil Charge is a no-op.
func (ch *Charge) Refund() {
	if ch == nil {
		return
	}
	l := ch.l
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total = drop(l.total, ch.at)
	for _, k := range ch.keys {
		e := l.clients[k]
		if e == nil {
			continue // forgotten meanwhile
		}
		cl := e.Value.(*client)
		if cl.times = drop(cl.times, ch.at); len(cl.times) == 0 {
			l.forget(e)
		}
	}
	ch.keys = nil
}

func (l *Limiter) forget(e *clist.Element) {
	delete(l.clients, e.Value.(*client).key)
	l.lru.Remove(e)
}

// Clients is how many clients the limiter remembers.
func (l *Limiter) Clients() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}

type identity struct{ key, who string }

// identities are the keys c is counted under, with how a refusal names
// them: its address (an IPv4 address itself, an IPv6 address's prefix)
// and its session, or the one stdio client.
func (l *Limiter) identities(c Client) []identity {
	if c.Addr == "" && c.Session == "" {
		return []identity{{"stdio", "the stdio client"}}
	}
	var ids []identity
	if c.Addr != "" {
		ids = append(ids, l.addrIdentity(c.Addr))
	}
	if c.Session != "" {
		ids = append(ids, identity{"session:" + c.Session, "this session"})
	}
	return ids
}

// ClientOf is c's address as the limiter counts it (an IPv4 address, an
// IPv6 prefix), which a proposal records for the curator's filter; empty
// without an address.
func (l *Limiter) ClientOf(c Client) string {
	if c.Addr == "" {
		return ""
	}
	return strings.TrimPrefix(l.addrIdentity(c.Addr).key, "addr:")
}

func (l *Limiter) addrIdentity(addr string) identity {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return identity{"addr:" + addr, "address " + addr}
	}
	a = a.WithZone("").Unmap()
	if a.Is4() {
		return identity{"addr:" + a.String(), "address " + a.String()}
	}
	p := netip.PrefixFrom(a, l.IPv6Prefix).Masked()
	return identity{"addr:" + p.String(), fmt.Sprintf("IPv6 /%d %s", l.IPv6Prefix, p)}
}

// since drops the times not after cutoff (a window's length ago or more)
// from ts, oldest first.
func since(ts []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(cutoff) {
		i++
	}
	return ts[i:]
}

// drop removes one time equal to at from ts, the newest such.
func drop(ts []time.Time, at time.Time) []time.Time {
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Equal(at) {
			return append(ts[:i], ts[i+1:]...)
		}
	}
	return ts
}
