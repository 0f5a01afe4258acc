package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/querylog"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/stdio"
	"github.com/three-good-sources/3gs/internal/tools"
)

// serveOptions are serve's flags, which doctor shares.
type serveOptions struct {
	registryFile
	threshold                                                        thresholdFlag
	matcher                                                          string
	maxMessageBytes                                                  intFlag
	key                                                              keyOptions
	pubkey, tokens, auditLog                                         string
	expires                                                          durationFlag
	allowExpired                                                     bool
	queryLog                                                         string
	queryLogMaxBytes                                                 intFlag
	catalogMax                                                       intFlag
	allowUnsigned                                                    bool
	http, allowOrigin, allowHost, publicURL                          string
	accessLog                                                        string
	maxConcurrent, maxSessions, maxSessionsPerClient, maxConnections intFlag
	sessionIdle                                                      durationFlag
	sessionSecretFile                                                string
	shutdownTimeout                                                  durationFlag
	peerCache                                                        string
	peerRefresh, peerStale, peerTimeout                              durationFlag
	peerMaxBytes, peerParallel                                       intFlag
	follow                                                           followOptions
	checkSources                                                     durationFlag
	healthFile                                                       string
	logFormat, logLevel                                              string
}

func serveFlags(f *Flags) {
	o := options[serveOptions](f)
	o.registryFile.flags(f, "registry file to serve; none means the embedded registry.json")
	f.ThresholdVar(&o.threshold, "match-threshold", "MATCH_THRESHOLD", tools.DefaultThreshold, "lowest match score (0 to 1) get_sources accepts when a call sets no threshold")
	f.StringVar(&o.matcher, "matcher", "THREEGS_MATCHER", "index", "matching algorithm: index, or baseline (the old whole-string matcher, kept for comparison)")
	f.IntVar(&o.maxMessageBytes, "max-message-bytes", "THREEGS_MAX_MESSAGE_BYTES", strconv.Itoa(stdio.DefaultMaxMessageBytes), 1024, "longest accepted message in bytes; longer ones get -32600 (HTTP: 413)")
	keyFlag(f, &o.key, "the curator's secret key file; it must be the key the registry names as curator.pubkey")
	f.StringVar(&o.pubkey, "pubkey", "THREEGS_PUBKEY", "", "the curator key to trust (pk:Z32 or Z32): a registry not signed by it is refused, at start and by reload_registry. None: the public half of --key-file, or else the signer of the first registry served")
	f.StringVar(&o.tokens, "tokens", "THREEGS_TOKENS", "", "tokens file (made with 3gs token new) whose tokens unlock user and admin tools; re-read on SIGHUP. None: every caller is public")
	f.StringVar(&o.auditLog, "audit-log", "THREEGS_AUDIT_LOG", "", "the registry's audit log: every change is appended to it, hash-chained and signed with the curator key, and the registry's signature names its head; none means REGISTRY.audit.jsonl beside the registry file")
	expiresFlag(f, &o.expires, "how long the signatures this server writes (with --key-file) vouch for a registry whose signature records no span; otherwise it keeps the span the curator chose with 3gs sign --expires, signing again for that span before half of it is left")
	f.BoolVar(&o.allowExpired, "allow-expired", "THREEGS_ALLOW_EXPIRED", "serve a registry, and accept peers' registries, whose signature has expired or never expires (signed by a 3gs before expiry existed); without it they are refused, since an expired copy is what a freeze attack replays")
	f.StringVar(&o.queryLog, "query-log", "THREEGS_QUERY_LOG", "", "JSON Lines file (created 0600) to log every get_sources query and how it ended, for 3gs misses; never tokens or who asked. None: no query log")
	f.IntVar(&o.queryLogMaxBytes, "query-log-max-bytes", "THREEGS_QUERY_LOG_MAX_BYTES", strconv.Itoa(querylog.DefaultMaxBytes), 4096, "size at which the query log is rotated to FILE.1 (replacing it), so it never takes more than twice this")
	f.IntVar(&o.catalogMax, "catalog-max", "THREEGS_CATALOG_MAX", strconv.Itoa(defaultCatalogMax), 0, "largest registry, in categories, whose every slug the server's instructions list, so an agent may name a category on its first call and a get_sources answer that finds none points there instead of listing them; 0 lists none")
	f.BoolVar(&o.allowUnsigned, "allow-unsigned", "THREEGS_ALLOW_UNSIGNED", "serve even when the registry's signature does not verify, or is missing although the registry names a curator key; get_provenance and /health then report it as not verified")
	httpFlags(f, o)
	peerFlags(f, o)
	followFlags(f, &o.follow)
	checkSourcesFlags(f, o)
	proposalFlags(f)
	identityFlags(f)
	f.StringVar(&o.logFormat, "log-format", "THREEGS_LOG_FORMAT", "text", "log format on stderr: text or json")
	f.StringVar(&o.logLevel, "log-level", "THREEGS_LOG_LEVEL", "info", "log level: debug, info, warn or error")
}

// httpFlags are serve's flags for serving over HTTP.
func httpFlags(f *Flags, o *serveOptions) {
	f.StringVar(&o.http, "http", "THREEGS_HTTP", "", "serve MCP Streamable HTTP on this address (HOST:PORT, e.g. 127.0.0.1:3000; a port alone means 127.0.0.1) instead of stdio, with /mcp, /health and /registry")
	f.StringVar(&o.allowOrigin, "allow-origin", "THREEGS_ALLOW_ORIGIN", "", "HTTP: comma-separated browser origins (scheme://host[:port]) allowed besides loopback ones")
	f.StringVar(&o.allowHost, "allow-host", "THREEGS_ALLOW_HOST", "", "HTTP: comma-separated Host names accepted besides localhost, 127.0.0.1 and ::1 (needed behind a proxy that keeps the Host header); when bound to a non-loopback address, the only names accepted")
	f.StringVar(&o.publicURL, "public-url", "THREEGS_PUBLIC_URL", "", "HTTP: base URL clients reach this server by, for the download steps get_provenance prints; none means the request's Host")
	f.IntVar(&o.maxConcurrent, "max-concurrent", "THREEGS_MAX_CONCURRENT", strconv.Itoa(httpserver.DefaultMaxConcurrent), 1, "HTTP: /mcp requests run at once, and apart from them /audit and /audit/head requests; more get 503 with Retry-After")
	f.IntVar(&o.maxSessions, "max-sessions", "THREEGS_MAX_SESSIONS", strconv.Itoa(httpserver.DefaultMaxSessions), 1, "HTTP: open sessions of 2025-era clients; past it a new session replaces the least recently used one not running a request")
	f.IntVar(&o.maxSessionsPerClient, "max-sessions-per-client", "THREEGS_MAX_SESSIONS_PER_CLIENT", strconv.Itoa(httpserver.DefaultMaxSessionsPerClient), 1, "HTTP: open sessions per client address; past it that client's own least recently used session makes way")
	f.IntVar(&o.maxConnections, "max-connections", "THREEGS_MAX_CONNECTIONS", strconv.Itoa(httpserver.DefaultMaxConnections), 1, "HTTP: connections held open; past it the one waiting longest without a request is closed, or a newcomer gets 503 when all are busy")
	f.DurationVar(&o.sessionIdle, "session-idle-timeout", "THREEGS_SESSION_IDLE_TIMEOUT", httpserver.DefaultSessionIdle.String(), "HTTP: a session unused this long ends (its id then gets 404)")
	f.StringVar(&o.sessionSecretFile, "session-secret-file", "THREEGS_SESSION_SECRET_FILE", "", "HTTP: file of 64 or more hex characters (mode 600) that signs 2025-era session ids; replicas given the same file accept each other's sessions, so a load balancer needs no sticky routing. None: a random secret, sessions good on this process only")
	f.StringVar(&o.accessLog, "access-log", "THREEGS_ACCESS_LOG", "all", httpserver.AccessLogUsage)
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", "THREEGS_SHUTDOWN_TIMEOUT", httpserver.DefaultShutdownTimeout.String(), "HTTP: on SIGTERM, how long requests in flight may take to finish")
}

// peerFlags are serve's flags for following endorsed curators.
func peerFlags(f *Flags, o *serveOptions) {
	f.StringVar(&o.peerCache, "peer-cache", "THREEGS_PEER_CACHE", "", "directory for the last verified copy of each endorsed curator's registry, checked again when read, so a restart serves peers that are down; none means REGISTRY.peers beside the registry file, peers in --follow-cache for a read replica, or the user cache directory for the embedded registry")
	f.DurationVar(&o.peerRefresh, "peer-refresh", "THREEGS_PEER_REFRESH", "5m", "how often to fetch each endorsed curator's registry again (moved by up to a tenth either way; failures back off from a quarter of it up to four times it)")
	f.DurationVar(&o.peerStale, "peer-stale", "THREEGS_PEER_STALE", "1h", "age past which a peer's verified copy is reported stale (it still answers)")
	f.DurationVar(&o.peerTimeout, "peer-timeout", "THREEGS_PEER_TIMEOUT", peer.DefaultTimeout.String(), "how long fetching one peer's registry and signature may take in all")
	f.IntVar(&o.peerMaxBytes, "peer-max-bytes", "THREEGS_PEER_MAX_BYTES", "", 1024, "largest peer registry accepted, in bytes, and with --follow the largest copy of the origin's; none means 33554432 (32 MiB) or the --max-registry-bytes value if lower, which it may not exceed")
	f.IntVar(&o.peerParallel, "peer-parallel", "THREEGS_PEER_PARALLEL", "4", 1, "endorsed registries fetched at once")
}

// serveConfig is the command line of serve, checked.
type serveConfig struct {
	threshold   float64
	newMatcher  func(*registry.Registry) matcher.Matcher
	maxBytes    int
	maxRegistry int64 // --max-registry-bytes
	queryLogMax int
	catalogMax  int // --catalog-max
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
	follow    *app.Follow       // --follow; nil when not a read replica
	// checkSources is --check-sources; zero when off.
	checkSources time.Duration
	proposals    app.Proposals // proposalFlags
	identity     app.Identity  // identityFlags
	// The flags taken as given: --registry, --key-file and
	// --allow-exposed-key, --tokens, --audit-log, --query-log and
	// --health-file; --allow-expired and --allow-unsigned.
	registry                               string
	key                                    keyOptions
	tokens, auditLog, queryLog, healthFile string
	allowExpired, allowUnsigned            bool
}

// stdioTokenEnv holds the token of a stdio session (app.StdioTokenEnv).
const stdioTokenEnv = app.StdioTokenEnv

// runServe serves MCP on stdin/stdout, or over HTTP with --http
// (internal/app). Logs go to stderr only: stdout carries nothing but
// protocol messages.
func runServe(ctx context.Context, env *Env, f *Flags) int {
	c, err := parseServe(env, f)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs serve: %v\n", err)
		return ExitUsage
	}
	if c.http == nil && isTerminal(env.Stdin) {
		// Someone typed 3gs (or go run ./cmd/3gs) and would otherwise
		// see nothing: stdout is the protocol's, so the hint goes to
		// stderr, once.
		fmt.Fprintln(env.Stderr, terminalHint)
	}
	for _, v := range unknownEnv(env) {
		c.log.Warn(v.String()+" It is ignored; 3gs help all lists every variable.", "variable", v.name, "closest", v.closest)
	}
	if c.follow == nil {
		limitMemoryFor(env, c.registry)
	}
	err = app.Run(ctx, c.app(env))
	// Over HTTP the log's lines are written by a goroutine of their own
	// (logWriter): they are all out before a message of ours follows.
	c.closeLog()
	switch {
	case err == nil:
		return ExitOK
	case !errors.Is(err, app.ErrLogged):
		fmt.Fprintf(env.Stderr, "3gs serve: %s\n", loadFailed(err))
	}
	return ExitFail
}

// terminalHint is what serve says when a person, not an MCP host, is on
// its stdin.
const terminalHint = `3gs serve speaks MCP (JSON-RPC, one message a line) on stdin and stdout, for an MCP host to start; it is waiting for one now (Ctrl-D ends it).
To try it by hand: 3gs query "how do I harden a linux server" (add --explain for why), 3gs serve --http 127.0.0.1:8080 for a browser, or 3gs help.`

// app is the configuration internal/app runs.
func (c *serveConfig) app(env *Env) *app.Config {
	return &app.Config{
		Registry: c.registry, MaxRegistry: c.maxRegistry, Threshold: c.threshold, NewMatcher: c.newMatcher, Pubkey: c.pubkey,
		Key:    func(warn func(string)) (ed25519.PrivateKey, string, error) { return signingKey(env, c.key, warn) },
		Tokens: c.tokens, Session: env.Getenv(stdioTokenEnv),
		AuditLog: c.auditLog, QueryLog: c.queryLog, HealthFile: c.healthFile, QueryLogMax: c.queryLogMax, CatalogMax: c.catalogMax,
		AllowExpired: c.allowExpired, AllowUnsigned: c.allowUnsigned, Validity: c.validity,
		Peers: c.peers, PeerCache: c.peerCache, Follow: c.follow, CheckSources: c.checkSources, Proposals: c.proposals, Identity: c.identity,
		HTTP: c.http, HTTPAddr: c.httpAddr, Stdin: env.Stdin, Stdout: env.Stdout, MaxMessageSize: c.maxBytes,
		Log: c.log, Version: buildVersion(),
	}
}

func parseServe(env *Env, f *Flags) (*serveConfig, error) {
	if len(f.Args()) > 0 {
		return nil, fmt.Errorf("unexpected argument %q; the registry is chosen with --registry PATH", f.Args()[0])
	}
	o := options[serveOptions](f)
	c := &serveConfig{registry: o.registry, key: o.key, tokens: o.tokens, auditLog: o.auditLog, queryLog: o.queryLog, healthFile: o.healthFile,
		allowExpired: o.allowExpired, allowUnsigned: o.allowUnsigned}
	var err error
	if c.threshold, err = o.threshold.get(); err != nil {
		return nil, err
	}
	if c.newMatcher, err = matcherNamed(o.matcher); err != nil {
		return nil, err
	}
	if z := o.pubkey; z != "" {
		if c.pubkey, err = curatorkey.ParsePublicKey(z); err != nil {
			return nil, fmt.Errorf("--pubkey (THREEGS_PUBKEY) %w", err)
		}
	}
	if c.queryLogMax, err = o.queryLogMaxBytes.get(); err != nil {
		return nil, err
	}
	if c.validity, err = validity(o.expires); err != nil {
		return nil, err
	}
	if c.catalogMax, err = o.catalogMax.get(); err != nil {
		return nil, err
	}
	if c.maxBytes, err = o.maxMessageBytes.get(); err != nil {
		return nil, err
	}
	if c.maxRegistry, err = registryLimit(o.maxRegistry); err != nil {
		return nil, err
	}
	logTo := env.Stderr
	c.closeLog = func() {}
	if o.http != "" {
		lw := newLogWriter(env.Stderr)
		logTo, c.closeLog = lw, func() { lw.Close() }
	}
	if c.log, err = newLogger(logTo, o.logFormat, o.logLevel); err != nil {
		c.closeLog()
		return nil, err
	}
	if err := parsePeers(o, c); err != nil {
		return nil, err
	}
	if c.checkSources, err = parseCheckSources(o.checkSources); err != nil {
		return nil, err
	}
	if c.proposals, err = parseProposals(f); err != nil {
		return nil, err
	}
	if c.identity, err = parseIdentity(f); err != nil {
		return nil, err
	}
	if c.follow, err = parseFollow(o); err != nil {
		return nil, err
	}
	if c.httpAddr = o.http; c.httpAddr == "" {
		for _, x := range []struct{ value, flag string }{
			{o.allowOrigin, "--allow-origin (THREEGS_ALLOW_ORIGIN)"},
			{o.allowHost, "--allow-host (THREEGS_ALLOW_HOST)"},
			{o.publicURL, "--public-url (THREEGS_PUBLIC_URL)"},
			{o.sessionSecretFile, "--session-secret-file (THREEGS_SESSION_SECRET_FILE)"},
		} {
			if x.value != "" {
				return nil, fmt.Errorf("%s applies to HTTP only; add --http ADDR, or drop it", x.flag)
			}
		}
		return c, nil
	}
	if c.httpAddr, err = listenAddr(c.httpAddr); err != nil {
		return nil, err
	}
	if c.http, err = parseHTTP(o, c); err != nil {
		return nil, err
	}
	return c, nil
}

// parseHTTP reads the flags of serving over HTTP at c.httpAddr.
func parseHTTP(o *serveOptions, c *serveConfig) (*httpserver.Options, error) {
	h := &httpserver.Options{MaxMessageBytes: int64(c.maxBytes), Log: c.log, Version: buildVersion(), PublicURL: o.publicURL}
	var err error
	for _, n := range []struct {
		p *int
		v *intFlag
	}{{&h.MaxConcurrent, &o.maxConcurrent}, {&h.MaxSessions, &o.maxSessions}, {&h.MaxSessionsPerClient, &o.maxSessionsPerClient}, {&h.MaxConnections, &o.maxConnections}} {
		if *n.p, err = n.v.get(); err != nil {
			return nil, err
		}
	}
	if h.SessionIdle, err = o.sessionIdle.get(); err != nil {
		return nil, err
	}
	if h.ShutdownTimeout, err = o.shutdownTimeout.get(); err != nil {
		return nil, err
	}
	if h.AccessLog, err = httpserver.ParseAccessLog(o.accessLog); err != nil {
		return nil, fmt.Errorf("--access-log (THREEGS_ACCESS_LOG): %w", err)
	}
	if path := o.sessionSecretFile; path != "" {
		if h.SessionSecret, err = httpserver.ReadSessionSecret(path); err != nil {
			return nil, fmt.Errorf("--session-secret-file (THREEGS_SESSION_SECRET_FILE): %w", err)
		}
	}
	for _, origin := range list(o.allowOrigin) {
		if httpserver.NormalOrigin(origin) == "" || strings.ContainsAny(strings.TrimPrefix(strings.TrimPrefix(origin, "http://"), "https://"), "/?#") {
			return nil, fmt.Errorf("--allow-origin (THREEGS_ALLOW_ORIGIN): %q is not an origin; write scheme://host[:port], such as https://app.example.com", origin)
		}
		h.AllowOrigins = append(h.AllowOrigins, origin)
	}
	hosts := list(o.allowHost)
	if httpserver.IsLoopbackAddr(c.httpAddr) {
		hosts = append(hosts, httpserver.LoopbackHosts...)
	}
	h.Hosts = hosts
	if u := h.PublicURL; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("--public-url (THREEGS_PUBLIC_URL) must start with http:// or https://, got %q", u)
	}
	return h, nil
}

// parsePeers reads the flags that say how endorsed registries are fetched.
func parsePeers(o *serveOptions, c *serveConfig) error {
	var err error
	if c.peers.Refresh, err = o.peerRefresh.get(); err != nil {
		return err
	}
	if c.peers.StaleAfter, err = o.peerStale.get(); err != nil {
		return err
	}
	timeout, err := o.peerTimeout.get()
	if err != nil {
		return err
	}
	// A peer's registry, or an origin's, is held, cached and decoded like
	// our own, but sent by another machine: 32 MiB (some 20,000
	// categories) unless the operator says more.
	maxBytes := min(c.maxRegistry, defaultPeerMaxBytes)
	if o.peerMaxBytes.given() {
		n, err := o.peerMaxBytes.get()
		if err != nil {
			return err
		}
		maxBytes = int64(n)
	}
	if c.peers.Parallel, err = o.peerParallel.get(); err != nil {
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
	c.peers.AllowExpired = o.allowExpired
	c.peerCache = o.peerCache
	return nil
}

// defaultCatalogMax is --catalog-max when none is given: the slugs of
// 150 categories take about 3 KB of instructions, read once a session,
// against about as much in every answer that finds no confident category.
const defaultCatalogMax = 150

// defaultPeerMaxBytes is --peer-max-bytes when none is given (or
// --max-registry-bytes, when that is lower).
const defaultPeerMaxBytes = 32 << 20

// minPeerRefresh is the shortest --peer-refresh.
const minPeerRefresh = 10 * time.Second

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

// checkSourcesFlags are serve's flags for checking the sources.
func checkSourcesFlags(f *Flags, o *serveOptions) {
	f.DurationVar(&o.checkSources, "check-sources", "THREEGS_CHECK_SOURCES", "", "check every source URL this often in the background (e.g. 24h; moved by up to a tenth either way), as 3gs check does with its defaults, keeping the outcome in the health file for get_sources and /health. None: no checks (a health file 3gs check wrote is still read)")
	f.StringVar(&o.healthFile, "health-file", "THREEGS_HEALTH_FILE", "", "the sources' health file, read for get_sources and /health and written by --check-sources; none means REGISTRY.health.json beside a registry file (for the embedded registry or a replica, the outcome is kept in memory only)")
}

// parseCheckSources is --check-sources: zero when off.
func parseCheckSources(v durationFlag) (time.Duration, error) {
	if !v.given() {
		return 0, nil
	}
	d, err := v.get()
	if err != nil {
		return 0, err
	}
	if d < time.Second {
		return 0, fmt.Errorf("--check-sources (THREEGS_CHECK_SOURCES) must be at least 1s, got %s; 24h is a polite interval", d)
	}
	return d, nil
}

// durationText writes a duration as Go writes it ("5m0s"), as the flags
// take it, in both formats: slog's JSON handler would write nanoseconds
// ("refresh":300000000000).
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level (THREEGS_LOG_LEVEL) must be debug, info, warn or error, got %q", level)
	}
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: durationText}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format (THREEGS_LOG_FORMAT) must be text or json, got %q", format)
}
