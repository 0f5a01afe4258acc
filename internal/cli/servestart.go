package cli

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/filelock"
	"github.com/three-good-sources/3gs/internal/follow"
	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/querylog"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
	"github.com/three-good-sources/3gs/internal/stdio"
	"github.com/three-good-sources/3gs/internal/tools"
)

// runServe serves MCP on stdin/stdout, or over HTTP with --http. Logs go
// to stderr only: stdout carries nothing but protocol messages.
func runServe(ctx context.Context, env *Env, f *Flags) int {
	c, err := parseServe(env, f)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs serve: %v\n", err)
		return ExitUsage
	}
	if c.http != nil {
		return serveHTTP(ctx, env, c)
	}
	srv, ok := newServer(ctx, env, c)
	if !ok {
		return ExitFail
	}
	defer srv.close()
	c.log.Info("serving MCP on stdio")
	in, out, closePipes := stdioPipes(env.Stdin, env.Stdout)
	defer closePipes()
	err = stdio.Serve(ctx, srv.mcp.NewSessionWithToken(env.Getenv(stdioTokenEnv)), in, out, stdio.Options{MaxMessageBytes: c.maxBytes, Log: c.log})
	if err != nil {
		c.log.Error("stdio failed", "err", err)
		return ExitFail
	}
	c.log.Info("stdin closed; exiting")
	return ExitOK
}

// serveHTTP binds the address first, so a port in use is reported at
// once and /health answers 503 while the registry loads, then serves until
// SIGTERM or SIGINT and drains.
func serveHTTP(ctx context.Context, env *Env, c *serveConfig) int {
	defer c.closeLog()
	ln, err := net.Listen("tcp", c.httpAddr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs serve: cannot listen on %s: %v\nFix: %s.\n", c.httpAddr, err, listenFix(err))
		return ExitFail
	}
	if !httpserver.IsLoopbackAddr(c.httpAddr) {
		c.log.Warn("listening beyond loopback: anyone who can reach this address can call the public tools; put TLS in front (a reverse proxy) and give tokens only over it", "addr", ln.Addr().String())
	}
	hs := httpserver.New(*c.http)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ctx, ln) }()

	srv, ok := newServer(ctx, env, c)
	if !ok {
		stop()
		<-served
		return ExitFail
	}
	defer srv.close()
	hs.SetBackend(httpserver.Backend{MCP: srv.mcp, Published: srv.tools.Published, Peers: srv.peers.Peers, Audit: srv.tools, Follow: srv.follow, Sources: srv.sources})
	c.log.Info("serving MCP over HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "health", "http://"+ln.Addr().String()+"/health")
	if err := <-served; err != nil {
		c.log.Error("HTTP server stopped", "err", err)
		return ExitFail
	}
	c.log.Info("all requests finished; exiting")
	return ExitOK
}

// server is a loaded registry behind the MCP core.
type server struct {
	mcp   *mcp.Server
	tools *tools.Handlers
	// lock makes this server the registry file's one editor while it
	// runs; nil when another process edits it (this one is read-only) or
	// the registry is the embedded one.
	lock *filelock.Lock
	// peers keeps the endorsed curators' verified registries, refreshed
	// until stopPeers, which returns once the refresh loop has ended.
	peers     *peer.Network
	stopPeers func()
	// follow reports a read replica's state for /health; nil otherwise.
	follow func() *gen.HealthFollow
	// sources reports the last check of the sources for /health.
	sources func() *gen.HealthSources
}

// close stops fetching peers and gives up the registry's lock: serve
// returns with nothing of it still running, even on stdio, where no
// context is cancelled when stdin ends.
func (s *server) close() {
	s.stopPeers()
	s.lock.Unlock()
}

// origin is the registry a server starts with and what vouches for it:
// a file or the embedded registry, with the curator key and the trust
// anchor; or a read replica's first copy, with its follower.
type origin struct {
	srvd       *served
	fl         *follow.Follower // nil unless a read replica
	key        ed25519.PrivateKey
	anchor     ed25519.PublicKey
	anchorFrom string
}

// loadOrigin reads the registry to serve and checks its signature and
// the keys, or, for a read replica, gets the first copy.
func loadOrigin(ctx context.Context, env *Env, c *serveConfig) (*origin, bool) {
	o := &origin{}
	var ok bool
	if c.follow != nil {
		// A read replica: the follower has verified the copy against the
		// origin's key; there is no file, key or anchor of its own.
		o.srvd, o.fl, ok = startFollowing(ctx, env, c, c.allowExpired)
		return o, ok
	}
	limitMemoryFor(env, c.registry)
	if o.srvd, ok = loadServed(env, "serve", c.registry, c.maxRegistry); !ok {
		return nil, false
	}
	if o.key, ok = checkProvenance(env, c, o.srvd); !ok {
		return nil, false
	}
	if o.anchor, o.anchorFrom, ok = trustAnchor(env, c.pubkey, o.srvd, o.key); !ok {
		return nil, false
	}
	return o, true
}

// newServer loads the registry, checks its signature and the keys, and
// builds the tools and the MCP core. Problems are reported on stderr.
func newServer(ctx context.Context, env *Env, c *serveConfig) (*server, bool) {
	log := c.log
	// The matcher's word tables do not depend on the registry: they are
	// built while it is read (or fetched) and checked.
	matcher.Preload()
	og, ok := loadOrigin(ctx, env, c)
	if !ok {
		return nil, false
	}
	keyring, ok := loadKeyring(ctx, env, c, c.http == nil)
	if !ok {
		return nil, false
	}
	srvd, fl := og.srvd, og.fl
	reg := srvd.reg
	cfg := tools.Config{Registry: reg, Matcher: c.newMatcher(reg), NewMatcher: c.newMatcher, Threshold: c.threshold, Signature: srvd.sig, Files: srvd.files, Modified: srvd.modified,
		// The embedded registry's freshness is the binary's (docs/provenance.md).
		EnforceExpiry: (fl != nil || srvd.path != "") && !c.allowExpired}
	var lock *filelock.Lock
	if srvd.path != "" {
		audit := c.auditLog
		if audit == "" {
			audit = srvd.path + ".audit.jsonl"
		}
		cfg.Edit = &tools.EditConfig{Path: srvd.path, Key: og.key, AuditLog: audit, AllowUnsigned: c.allowUnsigned, Anchor: og.anchor, AnchorFrom: og.anchorFrom,
			Validity: c.validity, AllowExpired: c.allowExpired, MaxRegistryBytes: c.maxRegistry}
		if lock, ok = lockForEditing(env, log, srvd, cfg.Edit); !ok {
			return nil, false
		}
	}
	if cfg.QueryLog, ok = openQueryLog(env, c); !ok {
		return nil, false
	}
	pc := c.peers
	followCache := ""
	if c.follow != nil {
		followCache = c.follow.cache
	}
	pc.Log, pc.CacheDir, pc.Build = log, peerCacheDir(c.peerCache, srvd.path, followCache), c.newMatcher
	cfg.Peers = peer.New(pc)
	if fl != nil {
		cfg.Origin = c.follow.url
	}
	h := tools.New(cfg)
	if cfg.Edit != nil {
		notes, err := h.OpenAuditLog()
		if err != nil {
			lock.Unlock()
			fmt.Fprintf(env.Stderr, "3gs serve: %v\n", err)
			return nil, false
		}
		for _, n := range notes {
			log.Warn(n)
		}
	}
	srv := &server{mcp: mcp.NewServer(mcp.Config{Handlers: h, Version: buildVersion(), Log: log, Keyring: keyring}), tools: h, lock: lock, peers: cfg.Peers}
	srv.start(ctx, c, og)
	if n := len(reg.Endorsements()); n > 0 {
		log.Info("following endorsed curators", "peers", n, "cache", pc.CacheDir, "refresh", pc.Refresh, "verified_own", srvd.sig.Verified)
	}
	log.Info("registry loaded", "registry", srvd.name, "version", reg.Version(), "categories", len(reg.Categories()), "sha256", reg.SHA256(), "signed", srvd.sig.Signed(), "verified", srvd.sig.Verified)
	return srv, true
}

// openQueryLog opens --query-log; nil when none is given.
func openQueryLog(env *Env, c *serveConfig) (*querylog.Log, bool) {
	path := c.queryLog
	if path == "" {
		return nil, true
	}
	ql, err := querylog.Open(path, int64(c.queryLogMax), c.log)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs serve: %v\nGive --query-log a regular file in a directory the server may write to, or leave it out to log no queries.\n", err)
		return nil, false
	}
	c.log.Info("logging get_sources queries", "query_log", path, "rotate_at_bytes", c.queryLogMax)
	return ql, true
}

// start runs what keeps the server current until close: the source
// checker, the registry file's watcher and sign channel, the peers, the
// signature's renewal and a replica's follower.
func (s *server) start(ctx context.Context, c *serveConfig, og *origin) {
	h, srvd, fl, log := s.tools, og.srvd, og.fl, c.log
	peersCtx, stopPeers := context.WithCancel(ctx)
	var done []chan struct{}
	goRun := func(run func()) {
		ch := make(chan struct{})
		done = append(done, ch)
		go func() { defer close(ch); run() }()
	}
	healthFile := c.healthFile
	if healthFile == "" && srvd.path != "" && fl == nil {
		healthFile = sourcehealth.PathFor(srvd.path)
	}
	checker := newSourceChecker(h, healthFile, c.checkSources, log)
	goRun(func() { checker.run(peersCtx) })
	goRun(func() {
		if srvd.path != "" && fl == nil {
			watchLoop(peersCtx, h, srvd.path, log)
		}
	})
	goRun(func() {
		if s.lock != nil && og.key != nil {
			serveSignChannel(peersCtx, h, srvd.path, log)
		}
	})
	goRun(func() { s.peers.Run(peersCtx) })
	goRun(func() { renewLoop(peersCtx, h, log) })
	goRun(func() {
		if fl != nil {
			fl.SetPublish(followPublisher(h, c))
			log.Info("following the origin as a read replica", "origin", c.follow.url, "refresh", c.follow.refresh, "cache", c.follow.cache)
			fl.Run(peersCtx)
		}
	})
	s.stopPeers = func() {
		stopPeers()
		for _, ch := range done {
			<-ch
		}
	}
	s.sources = checker.health
	if fl != nil {
		s.follow = followHealth(fl, time.Now)
	}
}

// loadKeyring reads --tokens (see loadTokens).
func loadKeyring(ctx context.Context, env *Env, c *serveConfig, stdio bool) (*auth.Keyring, bool) {
	return loadTokens(ctx, env, c.tokens, c.log, stdio)
}
