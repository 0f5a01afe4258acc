package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/filelock"
	"github.com/three-good-sources/3gs/internal/follow"
	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/querylog"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
	"github.com/three-good-sources/3gs/internal/stdio"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
	"github.com/three-good-sources/3gs/internal/tools"
)

func serveFlags(f *Flags) {
	f.String("registry", "REGISTRY_PATH", "", "registry file to serve; none means the embedded registry.json")
	registryLimitFlag(f)
	f.String("match-threshold", "MATCH_THRESHOLD", strconv.FormatFloat(tools.DefaultThreshold, 'f', -1, 64), "lowest match score (0 to 1) get_sources accepts when a call sets no threshold")
	f.String("matcher", "THREEGS_MATCHER", "index", "matching algorithm: index, or baseline (the old whole-string matcher, kept for comparison)")
	f.String("max-message-bytes", "THREEGS_MAX_MESSAGE_BYTES", strconv.Itoa(stdio.DefaultMaxMessageBytes), "longest accepted message in bytes; longer ones get -32600 (HTTP: 413)")
	keyFlag(f, "the curator's secret key file; it must be the key the registry names as curator.pubkey")
	f.String("pubkey", "THREEGS_PUBKEY", "", "the curator key to trust (pk:Z32 or Z32): a registry not signed by it is refused, at start and by reload_registry. None: the public half of --key-file, or else the signer of the first registry served")
	f.String("tokens", "THREEGS_TOKENS", "", "tokens file (made with 3gs token new) whose tokens unlock user and admin tools; re-read on SIGHUP. None: every caller is public")
	f.String("audit-log", "THREEGS_AUDIT_LOG", "", "the registry's audit log: every change is appended to it, hash-chained and signed with the curator key, and the registry's signature names its head; none means REGISTRY.audit.jsonl beside the registry file")
	f.String("expires", "THREEGS_EXPIRES", signature.DefaultValidity.String(), "how long the signatures this server writes (with --key-file) vouch for the registry; it signs again before half of that is left")
	f.Bool("allow-expired", "THREEGS_ALLOW_EXPIRED", "serve a registry, and accept peers' registries, whose signature has expired or never expires (signed by a 3gs before expiry existed); without it they are refused, since an expired copy is what a freeze attack replays")
	f.String("query-log", "THREEGS_QUERY_LOG", "", "JSON Lines file (created 0600) to log every get_sources query and how it ended, for 3gs misses; never tokens or who asked. None: no query log")
	f.String("query-log-max-bytes", "THREEGS_QUERY_LOG_MAX_BYTES", strconv.Itoa(querylog.DefaultMaxBytes), "size at which the query log is rotated to FILE.1 (replacing it), so it never takes more than twice this")
	f.Bool("allow-unsigned", "THREEGS_ALLOW_UNSIGNED", "serve even when the registry's signature does not verify, or is missing although the registry names a curator key; get_provenance and /health then report it as not verified")
	f.String("http", "THREEGS_HTTP", "", "serve MCP Streamable HTTP on this address (HOST:PORT, e.g. 127.0.0.1:3000; a port alone means 127.0.0.1) instead of stdio, with /mcp, /health and /registry")
	f.String("allow-origin", "THREEGS_ALLOW_ORIGIN", "", "HTTP: comma-separated browser origins (scheme://host[:port]) allowed besides loopback ones")
	f.String("allow-host", "THREEGS_ALLOW_HOST", "", "HTTP: comma-separated Host names accepted besides localhost, 127.0.0.1 and ::1 (needed behind a proxy that keeps the Host header); when bound to a non-loopback address, the only names accepted")
	f.String("public-url", "THREEGS_PUBLIC_URL", "", "HTTP: base URL clients reach this server by, for the download steps get_provenance prints; none means the request's Host")
	f.String("max-concurrent", "THREEGS_MAX_CONCURRENT", strconv.Itoa(httpserver.DefaultMaxConcurrent), "HTTP: /mcp requests run at once, and apart from them /audit and /audit/head requests; more get 503 with Retry-After")
	f.String("max-sessions", "THREEGS_MAX_SESSIONS", strconv.Itoa(httpserver.DefaultMaxSessions), "HTTP: open sessions of 2025-era clients; past it a new session replaces the least recently used one not running a request")
	f.String("max-sessions-per-client", "THREEGS_MAX_SESSIONS_PER_CLIENT", strconv.Itoa(httpserver.DefaultMaxSessionsPerClient), "HTTP: open sessions per client address; past it that client's own least recently used session makes way")
	f.String("max-connections", "THREEGS_MAX_CONNECTIONS", strconv.Itoa(httpserver.DefaultMaxConnections), "HTTP: connections held open; past it the one waiting longest without a request is closed, or a newcomer gets 503 when all are busy")
	f.String("session-idle-timeout", "THREEGS_SESSION_IDLE_TIMEOUT", httpserver.DefaultSessionIdle.String(), "HTTP: a session unused this long ends (its id then gets 404)")
	f.String("session-secret-file", "THREEGS_SESSION_SECRET_FILE", "", "HTTP: file of 64 or more hex characters (mode 600) that signs 2025-era session ids; replicas given the same file accept each other's sessions, so a load balancer needs no sticky routing. None: a random secret, sessions good on this process only")
	f.String("shutdown-timeout", "THREEGS_SHUTDOWN_TIMEOUT", httpserver.DefaultShutdownTimeout.String(), "HTTP: on SIGTERM, how long requests in flight may take to finish")
	f.String("peer-cache", "THREEGS_PEER_CACHE", "", "directory for the last verified copy of each endorsed curator's registry, checked again when read, so a restart serves peers that are down; none means REGISTRY.peers beside the registry file, peers in --follow-cache for a read replica, or the user cache directory for the embedded registry")
	f.String("peer-refresh", "THREEGS_PEER_REFRESH", "5m", "how often to fetch each endorsed curator's registry again (moved by up to a tenth either way; failures back off from a quarter of it up to four times it)")
	f.String("peer-stale", "THREEGS_PEER_STALE", "1h", "age past which a peer's verified copy is reported stale (it still answers)")
	f.String("peer-timeout", "THREEGS_PEER_TIMEOUT", peer.DefaultTimeout.String(), "how long fetching one peer's registry and signature may take in all")
	f.String("peer-max-bytes", "THREEGS_PEER_MAX_BYTES", "", "largest peer registry accepted, in bytes, and with --follow the largest copy of the origin's; none means 33554432 (32 MiB) or the --max-registry-bytes value if lower, which it may not exceed")
	f.String("peer-parallel", "THREEGS_PEER_PARALLEL", "4", "endorsed registries fetched at once")
	followFlags(f)
	checkSourcesFlags(f)
	proposalFlags(f)
	identityFlags(f)
	f.String("log-format", "THREEGS_LOG_FORMAT", "text", "log format on stderr: text or json")
	f.String("log-level", "THREEGS_LOG_LEVEL", "info", "log level: debug, info, warn or error")
}

// serveConfig is the command line of serve, checked.
type serveConfig struct {
	threshold   float64
	newMatcher  func(*registry.Registry) matcher.Matcher
	maxBytes    int
	maxRegistry int64 // --max-registry-bytes
	queryLogMax int
	log         *slog.Logger
	// closeLog writes out what the log still holds; HTTP serving batches
	// its lines (logWriter).
	closeLog  func()
	http      *httpserver.Options // nil: stdio
	httpAddr  string
	pubkey    ed25519.PublicKey // --pubkey; nil when not given
	peers     peer.Config       // without Log, CacheDir and Build
	peerCache string            // --peer-cache as given
	validity  time.Duration     // --expires
	follow    *followConfig     // --follow; nil when not a read replica
	// checkSources is --check-sources; zero when off.
	checkSources time.Duration
	identity     identityConfig // identityFlags
}

func parseServe(env *Env, f *Flags) (*serveConfig, error) {
	if len(f.Args()) > 0 {
		return nil, fmt.Errorf("unexpected argument %q; the registry is chosen with --registry PATH", f.Args()[0])
	}
	c := &serveConfig{}
	var err error
	if c.threshold, err = f.Threshold("match-threshold"); err != nil {
		return nil, err
	}
	if c.newMatcher, err = matcherNamed(f.Value("matcher")); err != nil {
		return nil, err
	}
	if z := f.Value("pubkey"); z != "" {
		if c.pubkey, err = pkarr.ParsePublicKey(z); err != nil {
			return nil, fmt.Errorf("--pubkey (THREEGS_PUBKEY) %w", err)
		}
	}
	if c.queryLogMax, err = f.Int("query-log-max-bytes", 4096); err != nil {
		return nil, err
	}
	if c.validity, err = validityFlag(f); err != nil {
		return nil, err
	}
	if c.maxBytes, err = f.Int("max-message-bytes", 1024); err != nil {
		return nil, err
	}
	if c.maxRegistry, err = registryLimit(f); err != nil {
		return nil, err
	}
	logTo := env.Stderr
	c.closeLog = func() {}
	if f.Value("http") != "" {
		lw := newLogWriter(env.Stderr)
		logTo, c.closeLog = lw, func() { lw.Close() }
	}
	if c.log, err = newLogger(logTo, f.Value("log-format"), f.Value("log-level")); err != nil {
		c.closeLog()
		return nil, err
	}
	if err := parsePeers(f, c); err != nil {
		return nil, err
	}
	if c.checkSources, err = parseCheckSources(f); err != nil {
		return nil, err
	}
	if c.identity, err = parseIdentity(f); err != nil {
		return nil, err
	}
	if c.follow, err = parseFollow(f); err != nil {
		return nil, err
	}
	if c.httpAddr = f.Value("http"); c.httpAddr == "" {
		for _, name := range []string{"allow-origin", "allow-host", "public-url", "session-secret-file"} {
			if f.Value(name) != "" {
				return nil, fmt.Errorf("--%s (%s) applies to HTTP only; add --http ADDR, or drop it", name, f.twins[name])
			}
		}
		return c, nil
	}
	if c.httpAddr, err = listenAddr(c.httpAddr); err != nil {
		return nil, err
	}
	o := &httpserver.Options{MaxMessageBytes: int64(c.maxBytes), Log: c.log, Version: buildVersion(), PublicURL: f.Value("public-url")}
	if o.MaxConcurrent, err = f.Int("max-concurrent", 1); err != nil {
		return nil, err
	}
	if o.MaxSessions, err = f.Int("max-sessions", 1); err != nil {
		return nil, err
	}
	if o.MaxSessionsPerClient, err = f.Int("max-sessions-per-client", 1); err != nil {
		return nil, err
	}
	if o.MaxConnections, err = f.Int("max-connections", 1); err != nil {
		return nil, err
	}
	if o.SessionIdle, err = f.Duration("session-idle-timeout"); err != nil {
		return nil, err
	}
	if o.ShutdownTimeout, err = f.Duration("shutdown-timeout"); err != nil {
		return nil, err
	}
	if path := f.Value("session-secret-file"); path != "" {
		if o.SessionSecret, err = httpserver.ReadSessionSecret(path); err != nil {
			return nil, fmt.Errorf("--session-secret-file (THREEGS_SESSION_SECRET_FILE): %w", err)
		}
	}
	for _, origin := range f.List("allow-origin") {
		if httpserver.NormalOrigin(origin) == "" || strings.ContainsAny(strings.TrimPrefix(strings.TrimPrefix(origin, "http://"), "https://"), "/?#") {
			return nil, fmt.Errorf("--allow-origin (THREEGS_ALLOW_ORIGIN): %q is not an origin; write scheme://host[:port], such as https://app.example.com", origin)
		}
		o.AllowOrigins = append(o.AllowOrigins, origin)
	}
	hosts := f.List("allow-host")
	if httpserver.IsLoopbackAddr(c.httpAddr) {
		hosts = append(hosts, httpserver.LoopbackHosts...)
	}
	o.Hosts = hosts
	if u := o.PublicURL; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("--public-url (THREEGS_PUBLIC_URL) must start with http:// or https://, got %q", u)
	}
	c.http = o
	return c, nil
}

// parsePeers reads the flags that say how endorsed registries are fetched.
func parsePeers(f *Flags, c *serveConfig) error {
	var err error
	if c.peers.Refresh, err = f.Duration("peer-refresh"); err != nil {
		return err
	}
	if c.peers.StaleAfter, err = f.Duration("peer-stale"); err != nil {
		return err
	}
	timeout, err := f.Duration("peer-timeout")
	if err != nil {
		return err
	}
	// A peer's registry, or an origin's, is held, cached and decoded like
	// our own, but sent by another machine: 32 MiB (some 20,000
	// categories) unless the operator says more.
	maxBytes := min(c.maxRegistry, defaultPeerMaxBytes)
	if f.Value("peer-max-bytes") != "" {
		n, err := f.Int("peer-max-bytes", 1024)
		if err != nil {
			return err
		}
		maxBytes = int64(n)
	}
	if c.peers.Parallel, err = f.Int("peer-parallel", 1); err != nil {
		return err
	}
	// A refresh below this would have every peer asked every few
	// milliseconds once backoff and jitter round to nothing.
	if c.peers.Refresh < minPeerRefresh {
		return fmt.Errorf("--peer-refresh (THREEGS_PEER_REFRESH) must be at least %s, got %s", minPeerRefresh, c.peers.Refresh)
	}
	// --max-registry-bytes is how much registry the operator lets this
	// process hold; a peer's copy is held and indexed just like our own.
	if maxBytes > c.maxRegistry {
		return fmt.Errorf("--peer-max-bytes (THREEGS_PEER_MAX_BYTES) must be at most %d, the --max-registry-bytes (THREEGS_MAX_REGISTRY_BYTES) limit; got %d", c.maxRegistry, maxBytes)
	}
	c.peers.Fetcher = peer.NewFetcher(maxBytes, timeout)
	c.peers.AllowExpired = flagBool(f, "allow-expired")
	c.peerCache = f.Value("peer-cache")
	return nil
}

// defaultPeerMaxBytes is --peer-max-bytes when none is given (or
// --max-registry-bytes, when that is lower).
const defaultPeerMaxBytes = 32 << 20

// minPeerRefresh is the shortest --peer-refresh.
const minPeerRefresh = 10 * time.Second

// peerCacheDir is where accepted peer copies are kept: --peer-cache,
// else beside the registry file, else in the user cache directory; ""
// (memory only) when there is none.
func peerCacheDir(flag, registryPath, followCache string) string {
	switch {
	case flag != "":
		return flag
	case registryPath != "":
		return registryPath + ".peers"
	case followCache != "":
		// A replica keeps what it caches in one place, --follow-cache.
		return filepath.Join(followCache, "peers")
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "3gs", "peers")
	}
	return ""
}

// listenAddr is the address --http names, checked before anything is
// bound so that a mistyped one is reported as the usage error it is: HOST:PORT,
// :PORT (every interface), or a port alone, which stays on 127.0.0.1.
func listenAddr(v string) (string, error) {
	const forms = "write HOST:PORT (such as 127.0.0.1:3000), :PORT for every interface, or a port alone for 127.0.0.1"
	host, port := "127.0.0.1", v
	if !allDigits(v) {
		var err error
		if host, port, err = net.SplitHostPort(v); err != nil {
			return "", fmt.Errorf("--http (THREEGS_HTTP) %q is not an address to listen on; %s", v, forms)
		}
		if !allDigits(port) {
			return "", fmt.Errorf("--http (THREEGS_HTTP) %q has no port number after the colon; %s", v, forms)
		}
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("--http (THREEGS_HTTP): port %s is out of range (1-65535)", port)
	}
	return net.JoinHostPort(host, port), nil
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// listenFix is the advice for an address that could not be bound. Only a
// port in use means another program holds it.
func listenFix(err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return "choose another port with --http (THREEGS_HTTP), or stop the other server listening there (perhaps another 3gs)"
	case errors.Is(err, syscall.EACCES), errors.Is(err, os.ErrPermission):
		return "ports below 1024 need privileges; use a higher port, behind a reverse proxy if it must be 80 or 443"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "the host is not an address of this machine; use one it has, such as 127.0.0.1, or :PORT for every interface"
	}
	return "check the host in --http (THREEGS_HTTP): it must be a name or an address of this machine"
}

// runServe serves MCP on stdin/stdout, or over HTTP with --http. Logs go
// to stderr only: stdout carries nothing but protocol messages.
func runServe(ctx context.Context, env *Env, f *Flags) int {
	c, err := parseServe(env, f)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs serve: %v\n", err)
		return ExitUsage
	}
	if c.http != nil {
		return serveHTTP(ctx, env, f, c)
	}
	srv, ok := newServer(ctx, env, f, c)
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
func serveHTTP(ctx context.Context, env *Env, f *Flags, c *serveConfig) int {
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

	srv, ok := newServer(ctx, env, f, c)
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
	// proposals is the proposals file this server writes; nil when it
	// takes none.
	proposals *proposals.Store
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
	s.proposals.Close()
	s.lock.Unlock()
}

// newServer loads the registry, checks its signature and the keys, and
// builds the tools and the MCP core. Problems are reported on stderr.
func newServer(ctx context.Context, env *Env, f *Flags, c *serveConfig) (*server, bool) {
	log := c.log
	var (
		srvd       *served
		fl         *follow.Follower
		key        ed25519.PrivateKey
		anchor     ed25519.PublicKey
		anchorFrom string
		ok         bool
	)
	// The matcher's word tables do not depend on the registry: they are
	// built while it is read (or fetched) and checked.
	matcher.Preload()
	if c.follow != nil {
		// A read replica: the follower has verified the copy against the
		// origin's key; there is no file, key or anchor of its own.
		if srvd, fl, ok = startFollowing(ctx, env, c, flagBool(f, "allow-expired")); !ok {
			return nil, false
		}
	} else {
		limitMemoryFor(env, f.Value("registry"))
		if srvd, ok = loadServed(env, "serve", f.Value("registry"), c.maxRegistry); !ok {
			return nil, false
		}
		if key, ok = checkProvenance(env, f, log, srvd); !ok {
			return nil, false
		}
		if anchor, anchorFrom, ok = trustAnchor(env, c.pubkey, srvd, key); !ok {
			return nil, false
		}
	}
	keyring, ok := loadKeyring(ctx, env, f, log, c.http == nil)
	if !ok {
		return nil, false
	}
	reg := srvd.reg
	cfg := tools.Config{Registry: reg, Matcher: c.newMatcher(reg), NewMatcher: c.newMatcher, Threshold: c.threshold, Signature: srvd.sig, Files: srvd.files, Modified: srvd.modified,
		// The embedded registry's freshness is the binary's (docs/provenance.md).
		EnforceExpiry: (fl != nil || srvd.path != "") && !flagBool(f, "allow-expired")}
	var lock *filelock.Lock
	if srvd.path != "" {
		audit := f.Value("audit-log")
		if audit == "" {
			audit = srvd.path + ".audit.jsonl"
		}
		cfg.Edit = &tools.EditConfig{Path: srvd.path, Key: key, AuditLog: audit, AllowUnsigned: flagBool(f, "allow-unsigned"), Anchor: anchor, AnchorFrom: anchorFrom,
			Validity: c.validity, AllowExpired: flagBool(f, "allow-expired"), MaxRegistryBytes: c.maxRegistry}
		var ok bool
		if lock, ok = lockForEditing(env, log, srvd, cfg.Edit); !ok {
			return nil, false
		}
	}
	if path := f.Value("query-log"); path != "" {
		ql, err := querylog.Open(path, int64(c.queryLogMax), log)
		if err != nil {
			fmt.Fprintf(env.Stderr, "3gs serve: %v\nGive --query-log a regular file in a directory the server may write to, or leave it out to log no queries.\n", err)
			return nil, false
		}
		cfg.QueryLog = ql
		log.Info("logging get_sources queries", "query_log", path, "rotate_at_bytes", c.queryLogMax)
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
	var props *proposals.Store
	if lock != nil {
		props = openProposals(f, h, srvd.path, log)
	}
	peersCtx, stopPeers := context.WithCancel(ctx)
	peersDone, renewDone, followDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	watchDone, signDone, sourcesDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	healthFile := f.Value("health-file")
	if healthFile == "" && srvd.path != "" && fl == nil {
		healthFile = sourcehealth.PathFor(srvd.path)
	}
	checker := newSourceChecker(h, healthFile, c.checkSources, log)
	go func() { defer close(sourcesDone); checker.run(peersCtx) }()
	go func() {
		defer close(watchDone)
		if srvd.path != "" && fl == nil {
			watchLoop(peersCtx, h, srvd.path, log)
		}
	}()
	go func() {
		defer close(signDone)
		if lock != nil && key != nil {
			serveSignChannel(peersCtx, h, srvd.path, log)
		}
	}()
	go func() { defer close(peersDone); cfg.Peers.Run(peersCtx) }()
	go func() { defer close(renewDone); renewLoop(peersCtx, h, log) }()
	identityDone := startIdentity(peersCtx, h, c.identity, srvd.path, pc.CacheDir, log)
	go func() {
		defer close(followDone)
		if fl != nil {
			fl.SetPublish(followPublisher(h, c))
			log.Info("following the origin as a read replica", "origin", c.follow.url, "refresh", c.follow.refresh, "cache", c.follow.cache)
			fl.Run(peersCtx)
		}
	}()
	if n := len(reg.Endorsements()); n > 0 {
		log.Info("following endorsed curators", "peers", n, "cache", pc.CacheDir, "refresh", pc.Refresh, "verified_own", srvd.sig.Verified)
	}
	log.Info("registry loaded", "registry", srvd.name, "version", reg.Version(), "categories", len(reg.Categories()), "sha256", reg.SHA256(), "signed", srvd.sig.Signed(), "verified", srvd.sig.Verified)
	srv := &server{mcp: mcp.NewServer(mcp.Config{Handlers: h, Version: buildVersion(), Log: log, Keyring: keyring}), tools: h, lock: lock, proposals: props, peers: cfg.Peers,
		stopPeers: func() {
			stopPeers()
			<-peersDone
			<-renewDone
			<-followDone
			<-watchDone
			<-signDone
			<-sourcesDone
			<-identityDone
		}, sources: checker.health}
	if fl != nil {
		srv.follow = followHealth(fl, time.Now)
	}
	return srv, true
}

// renewEvery is how often a server holding the curator key checks whether
// its registry's signature needs renewing (Handlers.Renew): often enough
// for the shortest validity --expires allows (an hour).
const renewEvery = 5 * time.Minute

// renewLoop keeps the served registry's signature from expiring while
// the server runs, until ctx ends.
func renewLoop(ctx context.Context, h *tools.Handlers, log *slog.Logger) {
	t := time.NewTicker(renewEvery)
	defer t.Stop()
	for {
		if signed, err := h.Renew(); err != nil {
			log.Warn("could not sign the registry again before its signature expires; it will be retried", "err", err)
		} else if signed {
			log.Info("signed the registry again before its signature expires", "version", h.Published().Registry.Version(), "expires", h.Published().Signature.Expires)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// lockForEditing makes this server the registry's one editor, or, when
// another process already is, serves it read-only and says why. Holding
// the lock, it clears what interrupted writes left: temporary files, and
// a partial last line of the audit log.
func lockForEditing(env *Env, log *slog.Logger, srvd *served, edit *tools.EditConfig) (*filelock.Lock, bool) {
	lock, err := filelock.TryLock(srvd.path)
	if err != nil {
		edit.ReadOnly = "This server serves " + srvd.name + " read-only: " + err.Error() + ", another 3gs that edits it. Make the change through that server, or stop it and restart this one, so that changes cannot overwrite each other."
		log.Warn("the registry is locked by another process; serving it read-only (curator tools refuse)", "registry", srvd.name, "why", err.Error())
		return nil, true
	}
	if n, err := store.RemoveStale(srvd.path, time.Now()); err == nil && n > 0 {
		log.Info("removed temporary files left by interrupted writes", "registry", srvd.name, "files", n)
	}
	return lock, true
}

// checkProvenance applies the start-up policy on signatures and keys. A
// signature file that does not verify, or a missing one when the registry
// names a real curator key, stops the server unless --allow-unsigned says
// to serve the registry marked unverified (signature.Status.Refuse). A
// configured key must be the curator's, or what it signs later could never
// verify.
func checkProvenance(env *Env, f *Flags, log *slog.Logger, s *served) (ed25519.PrivateKey, bool) {
	st := s.sig
	refused := st.Refuse(s.reg)
	switch {
	case refused != nil && !flagBool(f, "allow-unsigned"):
		what := "its signature does not verify: " + refused.Error()
		if errors.Is(refused, signature.ErrMissing) {
			what = "it names the curator key " + s.reg.Curator().Pubkey + " but " + signature.ShellQuote(s.files.Signature) + " is missing, so nothing shows the curator wrote it"
		}
		fmt.Fprintf(env.Stderr, "3gs serve: refusing to serve %s: %s\n"+
			"If the registry is the curator's, the curator signs it: 3gs sign --key-file KEY %s\n"+
			"To serve it anyway, reported as not verified by get_provenance and /health, add --allow-unsigned (THREEGS_ALLOW_UNSIGNED=1).\n",
			s.name, what, signature.ShellQuote(s.files.Registry))
		return nil, false
	case refused != nil:
		log.Warn("serving a registry whose signature is missing or does not verify (--allow-unsigned); it is reported as not verified", "registry", s.name, "problem", refused.Error())
	case s.path != "" && st.Stale(time.Now()) != nil && !flagBool(f, "allow-expired"):
		// The embedded registry is exempt: it is part of the binary, and
		// as fresh as the binary is.
		fmt.Fprintf(env.Stderr, "3gs serve: refusing to serve %s: %v.\n"+
			"The curator signs it again: 3gs sign --key-file KEY %s. To serve it anyway, add --allow-expired (THREEGS_ALLOW_EXPIRED=1).\n",
			s.name, st.Stale(time.Now()), signature.ShellQuote(s.files.Registry))
		return nil, false
	case st.Verified:
		if err := st.Stale(time.Now()); err != nil && s.path != "" {
			log.Warn("serving a registry whose signature no longer vouches for it (--allow-expired)", "registry", s.name, "problem", err.Error())
		}
		expires := any(st.Expires)
		switch {
		case s.path == "":
			expires = "never: the embedded registry is exempt"
		case st.Expires.IsZero():
			expires = "never"
		}
		log.Info("registry signature verified", "signer", pkarr.URI(st.Signer), "signed_at", st.SignedAt, "expires", expires)
	default:
		log.Info("serving an unsigned registry: its curator key is "+registry.Placeholder, "registry", s.name)
	}
	key, from, err := signingKey(env, f, func(msg string) { log.Warn(msg) })
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs serve: %v\n", err)
		return nil, false
	}
	if key == nil {
		return nil, true
	}
	if err := signature.CheckCurator(s.reg, pkarr.Public(key)); err != nil {
		fmt.Fprintf(env.Stderr, "3gs serve: the key from %s is %s, but %s names curator key %s.\n"+
			"Serve with the curator's key, or make this key the curator's: set \"pubkey\": %q in the registry's \"curator\" and run 3gs sign.\n",
			from, pkarr.URI(pkarr.Public(key)), s.name, s.reg.Curator().Pubkey, pkarr.URI(pkarr.Public(key)))
		return nil, false
	}
	log.Info("curator key loaded", "from", from, "pubkey", pkarr.URI(pkarr.Public(key)))
	return key, true
}

// trustAnchor is the curator key this server trusts for as long as it
// runs, and where it came from: --pubkey, else the public half of the
// curator key file, else the signer of the registry served at start (nil
// when that is not verified). With --pubkey, the registry served at start
// must be verified under it, whatever --allow-unsigned says: a file that
// names another curator and carries that curator's valid signature is
// exactly what re-keying looks like.
func trustAnchor(env *Env, pinned ed25519.PublicKey, s *served, key ed25519.PrivateKey) (ed25519.PublicKey, string, bool) {
	anchor, from := pinned, "--pubkey"
	if key != nil {
		pub := pkarr.Public(key)
		if anchor != nil && !anchor.Equal(pub) {
			fmt.Fprintf(env.Stderr, "3gs serve: --pubkey is %s but the curator key file holds %s; give the key file of the trusted curator, or drop one of the two.\n", pkarr.URI(anchor), pkarr.URI(pub))
			return nil, "", false
		}
		if anchor == nil {
			return pub, "the public half of the curator key file", true
		}
	}
	if anchor == nil {
		if s.sig.Verified {
			return s.sig.Signer, "the registry served at start", true
		}
		return nil, "", true
	}
	if !s.sig.Verified || !s.sig.Signer.Equal(anchor) {
		why := "it has no signature file"
		switch {
		case s.sig.Signed() && !s.sig.Verified:
			why = "its signature does not verify: " + s.sig.Problem.Error()
		case s.sig.Verified:
			why = "it is signed by " + pkarr.URI(s.sig.Signer) + " (the curator it names)"
		}
		fmt.Fprintf(env.Stderr, "3gs serve: refusing to serve %s: --pubkey trusts only registries signed by %s, and %s.\n"+
			"Serve a copy the trusted curator signed, or, if the curator really changed keys, start with --pubkey set to the new key.\n", s.name, pkarr.URI(anchor), why)
		return nil, "", false
	}
	return anchor, from, true
}

// stdioTokenEnv holds the token of a stdio session: the host that starts
// 3gs sets it, since a stdio client has no header to send one in.
const stdioTokenEnv = "THREEGS_TOKEN"

// loadKeyring reads --tokens and re-reads it on SIGHUP for as long as the
// process runs. A bad file at start stops the server; a bad file on SIGHUP
// is logged and the tokens in use stay. A stdio server also checks its
// session token (THREEGS_TOKEN) against the file, at start and on each
// reload, so that a mistyped or revoked token is reported rather than
// silently serving a public session.
func loadKeyring(ctx context.Context, env *Env, f *Flags, log *slog.Logger, stdio bool) (*auth.Keyring, bool) {
	path := f.Value("tokens")
	session := env.Getenv(stdioTokenEnv)
	if session != "" && !stdio {
		log.Warn(stdioTokenEnv + " is set but only a stdio server reads it; over HTTP each client sends its own token as Authorization: Bearer")
		session = ""
	}
	if path == "" {
		if session != "" {
			log.Warn(stdioTokenEnv+" is set but no --tokens file is given, so the token cannot be checked; every caller is public", "fix", "add --tokens FILE (THREEGS_TOKENS), the file 3gs token new wrote")
		}
		return nil, true
	}
	q := signature.ShellQuote(path)
	k, err := auth.LoadKeyring(path)
	if err != nil {
		problem, fix := tokensProblem(path, err)
		fmt.Fprintf(env.Stderr, "3gs serve: --tokens (THREEGS_TOKENS): %s\nFix: %s.\n", problem, fix)
		return nil, false
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		log.Warn("the tokens file does not exist, so no token is accepted and every caller is public", "file", path, "fix", "check --tokens (THREEGS_TOKENS), or create the file: 3gs token new --tokens "+q+" --tier admin --name NAME")
	}
	checkSession := func() {
		if session != "" && !k.Identify(session).Authenticated() {
			log.Warn(stdioTokenEnv+" matches no token in the tokens file, so this stdio session is public", "file", path, "fix", "check the value of "+stdioTokenEnv+"; 3gs token list --tokens "+q+" names the tokens the file holds")
		}
	}
	counts := k.Count()
	log.Info("tokens loaded", "file", path, "user", counts[gen.TierUser], "admin", counts[gen.TierAdmin])
	checkSession()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			if err := k.Reload(); err != nil {
				_, fix := tokensProblem(path, err)
				log.Error("SIGHUP: tokens file not reloaded; the tokens in use stay", "file", path, "err", err, "fix", fix)
				continue
			}
			counts := k.Count()
			log.Info("SIGHUP: tokens reloaded", "file", path, "user", counts[gen.TierUser], "admin", counts[gen.TierAdmin])
			checkSession()
		}
	}()
	return k, true
}

// tokensProblem says what is wrong with the tokens file at path and the
// fix that fits the cause. Only a missing file calls for 3gs token new: a
// new file over one that is unreadable or damaged would drop its tokens.
func tokensProblem(path string, err error) (problem, fix string) {
	q := signature.ShellQuote(path)
	var errs strictjson.Errors
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path + " does not exist", "check --tokens (THREEGS_TOKENS); a relative path is read from " + cwd() + "; or create the file: 3gs token new --tokens " + q + " --tier admin --name NAME"
	case errors.Is(err, fs.ErrPermission) && errors.As(err, &pe):
		return "cannot read " + pe.Path + ": " + pe.Err.Error(), "give the user that runs 3gs read access to it and to the directories above it; the file should belong to that user, mode 0600 (chmod 600 " + q + ")"
	case errors.As(err, &errs):
		return err.Error(), "correct what is named, or restore the file from a backup; a new file made over it would drop every token it holds"
	}
	return err.Error(), "check that --tokens (THREEGS_TOKENS) names the tokens file itself"
}

func flagBool(f *Flags, name string) bool {
	v, _ := strconv.ParseBool(f.Value(name))
	return v
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level (THREEGS_LOG_LEVEL) must be debug, info, warn or error, got %q", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format (THREEGS_LOG_FORMAT) must be text or json, got %q", format)
}
