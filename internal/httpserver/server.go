// Package httpserver serves 3gs over HTTP: MCP Streamable HTTP at /mcp, in
// both protocol eras; GET /health for load balancers and monitors; and
// GET /registry with /registry.sig, the exact bytes being served and their
// detached signature, so anyone can check the data without trusting the
// server; and GET /audit with /audit/head, the registry's audit log as
// stored, so anyone can check how it came to be; and pages for people at /
// (internal/pages), which read the same tools.
//
// Every request passes the same gate first: its Host (when the server is
// bound to loopback) and its Origin must be allowed, which is what stops a
// web page from reaching a local server through DNS rebinding.
package httpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/pages"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
	"github.com/three-good-sources/3gs/internal/store"
)

// Options bound and configure the server. Zero values take the defaults
// below.
type Options struct {
	// MaxMessageBytes is the largest accepted POST body; larger ones get 413.
	MaxMessageBytes int64
	// MaxConcurrent is how many /mcp requests run at once, and, apart
	// from them, how many /audit and /audit/head requests, and apart
	// again how many pages; more get 503.
	MaxConcurrent int
	// BodyTimeout is how long a /mcp body may take to arrive once the
	// headers are in; zero means the default BodyTimeout.
	BodyTimeout time.Duration
	// MaxConnections bounds the connections held open; past it the
	// connection waiting longest without a request is closed, or, when all
	// are running one, the newcomer gets 503.
	MaxConnections int
	// MaxSessions bounds open legacy-era sessions. At the bound a new
	// session replaces the one unused longest that has no request running.
	MaxSessions int
	// MaxSessionsPerClient bounds the sessions of one client address; past
	// it that client's own least recently used session makes way, so one
	// client cannot push everyone else's sessions out.
	MaxSessionsPerClient int
	// SessionIdle ends a legacy session unused for this long.
	SessionIdle time.Duration
	// SessionSecret signs session ids: at least MinSessionSecretBytes,
	// and New panics on a shorter one (callers check it first).
	// Replicas given the same secret accept each other's sessions, so a
	// load balancer needs no sticky routing. Empty: a random secret, and
	// ids good on this process only.
	SessionSecret []byte
	// SessionLifetime is how long a session id is good after initialize,
	// however much it is used: the bound on how long an id ended on one
	// replica stays good on the others. Zero means
	// DefaultSessionLifetime.
	SessionLifetime time.Duration
	// Hosts, when not empty, are the names the Host header may carry (any
	// port); others get 403. A server bound to loopback sets the loopback
	// names here, so a rebound DNS name cannot reach it.
	Hosts []string
	// AllowOrigins are browser origins allowed besides loopback ones, each
	// scheme://host[:port].
	AllowOrigins []string
	// PublicURL is the base URL clients reach this server by (for the
	// download steps get_provenance prints); empty means the request's
	// own Host.
	PublicURL string
	// Version is the build reported by /health.
	Version string
	// ShutdownTimeout is how long Serve waits for requests in flight once
	// its context ends.
	ShutdownTimeout time.Duration
	// TokenWarnEvery is the interval of the warnings about tokens not
	// recognised: the first failure after a quiet interval is logged at
	// once, later ones are counted and logged as one line per interval.
	// Zero means DefaultTokenWarnEvery.
	TokenWarnEvery time.Duration
	// AccessLog says which requests get an access-log line; the zero
	// value logs all of them.
	AccessLog AccessLog
	Log       *slog.Logger
	// Now is the clock of session expiry; nil means time.Now.
	Now func() time.Time
}

// Defaults.
const (
	DefaultMaxMessageBytes      = 4 << 20
	DefaultMaxConcurrent        = 256
	DefaultMaxSessions          = 1024
	DefaultMaxSessionsPerClient = 128
	DefaultMaxConnections       = 1024
	DefaultSessionIdle          = 30 * time.Minute
	DefaultShutdownTimeout      = 10 * time.Second
	DefaultTokenWarnEvery       = 10 * time.Second

	// MaxBodyMemory caps the memory request bodies being read may hold
	// at once. The largest honest message is far smaller (tool arguments
	// stop at 256 KiB), so 64 bodies at the 4 MiB message limit is room
	// enough; an attacker sending 4 MiB bodies on every connection gets
	// 503 past it rather than gigabytes of buffers.
	MaxBodyMemory = 256 << 20

	// Connection timeouts: a client gets this long to send its headers,
	// the body of a /mcp request, its whole request, and to read the
	// answer; an idle keep-alive connection is closed after IdleTimeout.
	// They are short because every one of them is time a connection is
	// held by a client that may never finish.
	ReadHeaderTimeout = 5 * time.Second
	BodyTimeout       = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 30 * time.Second
	IdleTimeout       = 30 * time.Second
	MaxHeaderBytes    = 64 << 10
)

// Backend is what the endpoints serve once the registry is loaded.
type Backend struct {
	MCP *mcp.Server
	// Published returns the registry as served right now.
	Published func() store.Served
	// Peers, when set, returns the endorsed curators' states for /health.
	Peers func() []peer.Peer
	// Audit, when set, answers /audit and /audit/head from the registry's
	// audit log; without it they answer 404.
	Audit Auditor
	// Follow, when set (a read replica), returns the follower's state for
	// /health.
	Follow func() *gen.HealthFollow
	// Sources, when set, returns what the last check of the sources
	// found, for /health; nil when none is known.
	Sources func() *gen.HealthSources
	// HealthFile, when set, returns the sources' health file as published
	// (signed with the curator's key when the server holds it), for
	// /registry.health.json and its .sig; Data nil when there is none.
	HealthFile func() sourcehealth.Published
	// Pages, when set, renders the pages for people: /, /c/{slug},
	// /provenance, /network and /proposals.
	Pages *pages.Site
}

type backend struct {
	Backend
	stateless *mcp.Session // answers modern requests, which carry no session
}

// Server is the HTTP face of 3gs.
type Server struct {
	opt      Options
	backend  atomic.Pointer[backend]
	sessions *sessionTable
	slots    chan struct{} // one per /mcp request running
	// auditSlots: one per /audit or /audit/head request running, as many
	// as slots but apart from them, so that readers of the log, however
	// many, never take the places of agents' requests.
	auditSlots chan struct{}
	// pageSlots: one per page being rendered, apart from both.
	pageSlots chan struct{}
	conns     atomic.Pointer[connLimiter] // set by Serve
	// bodyBytes is how much of bodyBudget the bodies being read hold.
	bodyBytes   atomic.Int64
	bodyBudget  int64
	origins     map[string]bool
	hosts       map[string]bool
	handler     http.Handler
	tokenWarn   tokenWarnings
	accessLimit accessLimiter
}

// positiveOr is v, or def when v is zero or negative (unset).
func positiveOr[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// New returns a server with no backend: until SetBackend, /health and /mcp
// answer 503.
func New(opt Options) *Server {
	opt.MaxMessageBytes = positiveOr(opt.MaxMessageBytes, DefaultMaxMessageBytes)
	opt.MaxConcurrent = positiveOr(opt.MaxConcurrent, DefaultMaxConcurrent)
	opt.MaxSessions = positiveOr(opt.MaxSessions, DefaultMaxSessions)
	opt.MaxSessionsPerClient = positiveOr(opt.MaxSessionsPerClient, DefaultMaxSessionsPerClient)
	opt.BodyTimeout = positiveOr(opt.BodyTimeout, BodyTimeout)
	opt.MaxConnections = positiveOr(opt.MaxConnections, DefaultMaxConnections)
	opt.SessionIdle = positiveOr(opt.SessionIdle, DefaultSessionIdle)
	opt.ShutdownTimeout = positiveOr(opt.ShutdownTimeout, DefaultShutdownTimeout)
	opt.TokenWarnEvery = positiveOr(opt.TokenWarnEvery, DefaultTokenWarnEvery)
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	opt.PublicURL = strings.TrimSuffix(opt.PublicURL, "/")
	s := &Server{
		opt:        opt,
		sessions:   newSessionTable(opt.MaxSessions, opt.MaxSessionsPerClient, opt.SessionIdle, opt.Now),
		slots:      make(chan struct{}, opt.MaxConcurrent),
		auditSlots: make(chan struct{}, opt.MaxConcurrent),
		pageSlots:  make(chan struct{}, opt.MaxConcurrent),
		origins:    map[string]bool{},
		hosts:      map[string]bool{},
	}
	s.sessions.ids = newSessionIDs(opt.SessionSecret, opt.SessionLifetime)
	// Room for the bodies of every request that may run at once, at their
	// largest, up to MaxBodyMemory; never less than two whole messages.
	s.bodyBudget = max(min(int64(opt.MaxConcurrent)*opt.MaxMessageBytes, MaxBodyMemory), 2*opt.MaxMessageBytes)
	for _, o := range opt.AllowOrigins {
		s.origins[NormalOrigin(o)] = true
	}
	for _, h := range opt.Hosts {
		s.hosts[strings.ToLower(strings.Trim(h, "[]"))] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", s.serveMCP)
	mux.HandleFunc("/health", s.serveHealth)
	mux.HandleFunc("/registry", s.serveRegistry)
	mux.HandleFunc("/registry.sig", s.serveSignature)
	mux.HandleFunc("/registry"+sourcehealth.Suffix, s.serveHealthFile)
	mux.HandleFunc("/registry"+sourcehealth.Suffix+sourcehealth.SigSuffix, s.serveHealthSignature)
	mux.HandleFunc("/audit", s.serveAudit)
	mux.HandleFunc("/audit/head", s.serveAuditHead)
	s.routePages(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path+"; 3gs serves /mcp, /health, /registry, /registry.sig, /registry.health.json(.sig), /audit and /audit/head, and pages for people at /")
	})
	s.handler = s.accessLog(s.gate(mux))
	return s
}

// SetBackend starts answering with b.
func (s *Server) SetBackend(b Backend) {
	s.backend.Store(&backend{Backend: b, stateless: b.MCP.NewSession()})
}

// Handler is the whole server as an http.Handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve answers connections on ln until ctx ends, then stops accepting,
// lets the requests in flight finish for up to ShutdownTimeout, and
// returns. It returns an error when requests were still running at the
// deadline or the listener failed.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	limited := newConnLimiter(ln, s.opt.MaxConnections, time.Now)
	s.conns.Store(limited)
	ln = limited
	hs := &http.Server{
		ConnState:         limited.track,
		Handler:           s.handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.opt.Log.Handler(), slog.LevelWarn),
	}
	stopSweeping := make(chan struct{})
	defer close(stopSweeping)
	go s.sweepSessions(stopSweeping)

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	s.opt.Log.Info("shutting down: no new connections; finishing requests in flight", "deadline", s.opt.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), s.opt.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
		return fmt.Errorf("requests still running after %s were cut off: %w", s.opt.ShutdownTimeout, err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// sweepSessions ends idle sessions now and then, so that sessions clients
// forget do not hold memory until the bound is reached.
func (s *Server) sweepSessions(stop <-chan struct{}) {
	t := time.NewTicker(max(s.opt.SessionIdle/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if n := s.sessions.sweep(); n > 0 {
				s.opt.Log.Debug("idle sessions ended", "count", n)
			}
		}
	}
}

// baseURL is where the client reaches this server.
func (s *Server) baseURL(r *http.Request) string {
	if s.opt.PublicURL != "" {
		return s.opt.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
