package proposals

import (
	"sync"
	"time"
)

// DefaultRate is --proposal-rate's default: proposals one client may make
// per hour.
const DefaultRate = 10

// maxClients bounds the clients a Limiter remembers: past it, a new client
// is refused until old windows end, so a flood of addresses costs memory
// no more than this.
const maxClients = 10000

// Limiter allows each client (a session, an address) Rate proposals per
// Window.
type Limiter struct {
	Rate   int
	Window time.Duration
	mu     sync.Mutex
	seen   map[string]*window
}

type window struct {
	start time.Time
	n     int
}

// NewLimiter allows rate per hour per client; rate 0 means DefaultRate.
func NewLimiter(rate int) *Limiter {
	if rate <= 0 {
		rate = DefaultRate
	}
	return &Limiter{Rate: rate, Window: time.Hour, seen: map[string]*window{}}
}

// Allow takes one proposal from the allowance of every key given (empty
// keys are skipped) at now, and reports whether all had one left; when
// not, none is taken, and retry says when the first refusing window ends.
func (l *Limiter) Allow(now time.Time, keys ...string) (ok bool, retry time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ws []*window
	for _, k := range keys {
		if k == "" {
			continue
		}
		w := l.seen[k]
		if w == nil || now.Sub(w.start) >= l.Window {
			if w == nil && len(l.seen) >= maxClients && !l.sweep(now) {
				return false, l.Window
			}
			w = &window{start: now}
			l.seen[k] = w
		}
		if w.n >= l.Rate {
			return false, w.start.Add(l.Window).Sub(now)
		}
		ws = append(ws, w)
	}
	for _, w := range ws {
		w.n++
	}
	return true, 0
}

// sweep forgets the clients whose window ended; it reports whether room
// was made.
func (l *Limiter) sweep(now time.Time) bool {
	for k, w := range l.seen {
		if now.Sub(w.start) >= l.Window {
			delete(l.seen, k)
		}
	}
	return len(l.seen) < maxClients
}
