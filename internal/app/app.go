// Package app turns a checked serve configuration into a running server:
// it loads the registry (or follows an origin's), applies the start-up
// policy on signatures and keys, makes this process the registry's one
// editor when it can, opens the query log and the tokens, and runs what
// keeps the server current (peers, the follower, the signature's renewal,
// the registry file's watcher and sign channel, the source health
// checker), then serves MCP on stdio or over HTTP. 3gs serve runs it;
// internal/cli keeps the parsing of flags, the printing and the exit
// codes.
package app

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/follow"
	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/pages"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/querylog"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
	"github.com/three-good-sources/3gs/internal/stdio"
	"github.com/three-good-sources/3gs/internal/tools"
)

// Config is serve's command line, checked.
type Config struct {
	// Registry is the file to serve; "" the embedded registry.
	Registry string
	// CatalogMax is the most categories a registry may hold for the
	// server's instructions to list them all (mcp.CatalogInstructions);
	// 0 lists none.
	CatalogMax  int
	MaxRegistry int64
	Threshold   float64
	NewMatcher  func(*registry.Registry) matcher.Matcher
	// Pubkey is the curator key to trust; nil when not pinned.
	Pubkey ed25519.PublicKey
	// Key reads the curator key, calling warn for what is worth a
	// warning, and says where it came from; nil key when none is set.
	Key func(warn func(string)) (ed25519.PrivateKey, string, error)
	// Tokens is the tokens file; Session a stdio session's token.
	Tokens, Session string
	// AuditLog, QueryLog and HealthFile are the files named by their
	// flags; "" for the defaults.
	AuditLog, QueryLog, HealthFile string
	QueryLogMax                    int
	AllowExpired, AllowUnsigned    bool
	// Validity is how long the signatures this server writes vouch.
	Validity time.Duration
	// Peers is how endorsed registries are fetched, without Log,
	// CacheDir and Build; PeerCache is --peer-cache.
	Peers     peer.Config
	PeerCache string
	// Follow makes a read replica; nil otherwise.
	Follow *Follow
	// CheckSources is the interval of background source checks; 0: none.
	CheckSources time.Duration
	// Proposals is how proposals are taken, by a server that edits its
	// registry; Identity how the curators' links are checked.
	Proposals Proposals
	Identity  Identity
	// HTTP, at HTTPAddr, serves over HTTP; nil serves on Stdin and Stdout.
	HTTP           *httpserver.Options
	HTTPAddr       string
	Stdin          io.Reader
	Stdout         io.Writer
	MaxMessageSize int
	Log            *slog.Logger
	Version        string
}

// ErrLogged is a failure of serving already written to the log.
var ErrLogged = errors.New("serving failed; the log says why")

// Run starts the server and serves until stdin closes (stdio) or ctx
// ends and the requests in flight finish (HTTP). An error that is not
// ErrLogged says why it did not start, in words for the operator (a
// *LoadError for a registry that did not load).
func Run(ctx context.Context, c *Config) error {
	if c.HTTP != nil {
		return runHTTP(ctx, c)
	}
	srv, err := Start(ctx, c)
	if err != nil {
		return err
	}
	defer srv.Close()
	c.Log.Info("serving MCP on stdio")
	in, out, closePipes := stdioPipes(c.Stdin, c.Stdout)
	defer closePipes()
	if err := stdio.Serve(ctx, srv.MCP.NewSessionWithToken(c.Session), in, out, stdio.Options{MaxMessageBytes: c.MaxMessageSize, Log: c.Log}); err != nil {
		c.Log.Error("stdio failed", "err", err)
		return ErrLogged
	}
	c.Log.Info("stdin closed; exiting")
	return nil
}

// runHTTP binds the address first, so a port in use is reported at
// once and /health answers 503 while the registry loads, then serves until
// SIGTERM or SIGINT and drains.
func runHTTP(ctx context.Context, c *Config) error {
	ln, err := net.Listen("tcp", c.HTTPAddr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %v\nFix: %s.", c.HTTPAddr, err, ListenFix(err))
	}
	if !httpserver.IsLoopbackAddr(c.HTTPAddr) {
		c.Log.Warn("listening beyond loopback: anyone who can reach this address can call the public tools; put TLS in front (a reverse proxy) and give tokens only over it", "addr", ln.Addr().String())
	}
	hs := httpserver.New(*c.HTTP)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ctx, ln) }()

	srv, err := Start(ctx, c)
	if err != nil {
		stop()
		<-served
		return err
	}
	defer srv.Close()
	hs.SetBackend(httpserver.Backend{MCP: srv.MCP, Published: srv.Tools.Published, Peers: srv.peers.Peers, Audit: srv.Tools, Follow: srv.follow, Sources: srv.sources, HealthFile: srv.healthFile,
		Pages: pages.New(pages.Config{Tools: srv.Tools, Sources: srv.sources})})
	c.Log.Info("serving MCP over HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "health", "http://"+ln.Addr().String()+"/health")
	if err := <-served; err != nil {
		c.Log.Error("HTTP server stopped", "err", err)
		return ErrLogged
	}
	c.Log.Info("all requests finished; exiting")
	return nil
}

// Server is a loaded registry behind the MCP core.
type Server struct {
	MCP   *mcp.Server
	Tools *tools.Handlers
	// lock makes this server the registry file's one editor while it
	// runs; nil when another process edits it (this one is read-only) or
	// the registry is the embedded one.
	lock *safefile.Lock
	// peers keeps the endorsed curators' verified registries, refreshed
	// until stopPeers, which returns once the refresh loop has ended.
	peers     *peer.Network
	stopPeers func()
	// follow reports a read replica's state for /health; nil otherwise.
	follow func() *gen.HealthFollow
	// sources reports the last check of the sources for /health;
	// healthFile is the health file /registry.health.json publishes.
	sources    func() *gen.HealthSources
	healthFile func() sourcehealth.Published
	// proposals is the proposals file this server writes; nil when it
	// takes none.
	proposals *proposals.File
}

// Close stops fetching peers and gives up the registry's lock: serve
// returns with nothing of it still running, even on stdio, where no
// context is cancelled when stdin ends.
func (s *Server) Close() {
	s.stopPeers()
	s.proposals.Close()
	s.lock.Unlock()
}

// origin is the registry a server starts with and what vouches for it:
// a file or the embedded registry, with the curator key and the trust
// anchor; or a read replica's first copy, with its follower.
type origin struct {
	srvd       *Served
	fl         *follow.Follower // nil unless a read replica
	key        ed25519.PrivateKey
	anchor     ed25519.PublicKey
	anchorFrom string
}

// loadOrigin reads the registry to serve and checks its signature and
// the keys, or, for a read replica, gets the first copy.
func loadOrigin(ctx context.Context, c *Config) (*origin, error) {
	o := &origin{}
	var err error
	if c.Follow != nil {
		// A read replica: the follower has verified the copy against the
		// origin's key; there is no file, key or anchor of its own.
		o.srvd, o.fl, err = startFollowing(ctx, c)
		return o, err
	}
	if o.srvd, err = Load(c.Registry, c.MaxRegistry); err != nil {
		return nil, err
	}
	if o.key, err = checkProvenance(c, o.srvd); err != nil {
		return nil, err
	}
	if o.anchor, o.anchorFrom, err = trustAnchor(c.Pubkey, o.srvd, o.key); err != nil {
		return nil, err
	}
	return o, nil
}

// Start loads the registry, checks its signature and the keys, builds
// the tools and the MCP core, and starts what keeps them current, until
// Close.
func Start(ctx context.Context, c *Config) (*Server, error) {
	log := c.Log
	// The matcher's word tables do not depend on the registry: they are
	// built while it is read (or fetched) and checked.
	matcher.Preload()
	og, err := loadOrigin(ctx, c)
	if err != nil {
		return nil, err
	}
	keyring, err := loadTokens(ctx, c.Tokens, c.Session, log, c.HTTP == nil)
	if err != nil {
		return nil, err
	}
	srvd, fl := og.srvd, og.fl
	reg := srvd.Reg
	cfg := tools.Config{Registry: reg, Matcher: c.NewMatcher(reg), NewMatcher: c.NewMatcher, Threshold: c.Threshold, Signature: srvd.Sig, Files: srvd.Files, Modified: srvd.Modified,
		// The embedded registry's freshness is the binary's (docs/provenance.md).
		EnforceExpiry: (fl != nil || srvd.Path != "") && !c.AllowExpired}
	var lock *safefile.Lock
	if srvd.Path != "" {
		audit := c.AuditLog
		if audit == "" {
			audit = srvd.Path + ".audit.jsonl"
		}
		cfg.Edit = &tools.EditConfig{Path: srvd.Path, Key: og.key, AuditLog: audit, AllowUnsigned: c.AllowUnsigned, Anchor: og.anchor, AnchorFrom: og.anchorFrom,
			Validity: c.Validity, AllowExpired: c.AllowExpired, MaxRegistryBytes: c.MaxRegistry}
		lock = LockForEditing(log, srvd, cfg.Edit)
	}
	if c.Proposals.Take == "on" && lock == nil {
		// As when the proposals file cannot be opened: not worth refusing
		// to serve for.
		log.Warn("taking no proposals despite --proposals on (THREEGS_PROPOSALS): this server does not edit the registry it serves; serve a registry file with --registry PATH")
	}
	ql, err := openQueryLog(c)
	if err != nil {
		return nil, err
	}
	if ql != nil { // a nil *querylog.Log is not a nil interface
		cfg.QueryLog = ql
	}
	pc := c.Peers
	followCache := ""
	if c.Follow != nil {
		followCache = c.Follow.Cache
		cfg.Origin = c.Follow.URL
		if m := fl.Mirror(); m != nil { // a nil *follow.Mirror is not a nil interface
			cfg.AuditMirror = m
		}
	}
	pc.Log, pc.CacheDir, pc.Build, pc.Fix = log, PeerCacheDir(c.PeerCache, srvd.Path, followCache), c.NewMatcher, PeerFix
	// The endorsements are the operator's own only in the registry this
	// node is the origin of; a replica's are the followed origin's, and
	// fetched as anyone's.
	if pc.Fetcher != nil {
		pc.Fetcher = pc.Fetcher.AsOperator(c.Follow == nil)
	}
	cfg.Peers = peer.New(pc)
	h := tools.New(cfg)
	if cfg.Edit != nil {
		notes, err := h.OpenAuditLog()
		if err != nil {
			lock.Unlock()
			return nil, err
		}
		for _, n := range notes {
			log.Warn(n)
		}
	}
	srv := &Server{Tools: h, lock: lock, peers: cfg.Peers}
	if lock != nil && c.Proposals.Take != "off" {
		srv.proposals = openProposals(c.Proposals, h, srvd.Path, log)
	}
	// What tools/list and the instructions show follows the registry:
	// read again after each reload, edit or new copy, so a new endorsement
	// lists get_federated_sources and a session begun after an edit gets
	// the new catalog.
	takes := srv.proposals != nil
	node := func() mcp.Node {
		n := mcp.Node{Federated: h.Federates(), Proposals: takes}
		if v, slugs, ok := h.Catalog(c.CatalogMax); ok {
			n.Catalog = mcp.Catalog{Version: v, Slugs: slugs}
		}
		return n
	}
	srv.MCP = mcp.NewServer(mcp.Config{Handlers: h, Version: c.Version, Log: log, Keyring: keyring, ReplicaOf: replicaOf(c), Node: node})
	h.OnPublish(srv.MCP.Refresh)
	srv.start(ctx, c, og, pc.CacheDir)
	if n := len(reg.Endorsements()); n > 0 {
		log.Info("following endorsed curators", "peers", n, "cache", pc.CacheDir, "refresh", pc.Refresh, "verified_own", srvd.Sig.Verified)
	}
	log.Info("registry loaded", "registry", srvd.Name, "version", reg.Version(), "categories", len(reg.Categories()), "sha256", reg.SHA256(), "signed", srvd.Sig.Signed(), "verified", srvd.Sig.Verified)
	return srv, nil
}

// openQueryLog opens --query-log; nil when none is given.
func openQueryLog(c *Config) (*querylog.Log, error) {
	path := c.QueryLog
	if path == "" {
		return nil, nil
	}
	ql, err := querylog.Open(path, int64(c.QueryLogMax), c.Log)
	if err != nil {
		return nil, fmt.Errorf("%v\nGive --query-log a regular file in a directory the server may write to, or leave it out to log no queries.", err)
	}
	c.Log.Info("logging get_sources queries", "query_log", path, "rotate_at_bytes", c.QueryLogMax)
	return ql, nil
}

// start runs what keeps the server current until Close: the source
// checker, the registry file's watcher and sign channel, the peers, the
// signature's renewal and a replica's follower.
func (s *Server) start(ctx context.Context, c *Config, og *origin, peerDir string) {
	h, srvd, fl, log := s.Tools, og.srvd, og.fl, c.Log
	peersCtx, stopPeers := context.WithCancel(ctx)
	var done []chan struct{}
	goRun := func(run func()) {
		ch := make(chan struct{})
		done = append(done, ch)
		go func() { defer close(ch); run() }()
	}
	healthFile := c.HealthFile
	if healthFile == "" && srvd.Path != "" && fl == nil {
		healthFile = sourcehealth.PathFor(srvd.Path)
	}
	checker := newSourceChecker(h, c.Version, healthFile, c.CheckSources, og.key, c.Follow == nil, log)
	goRun(func() { checker.run(peersCtx) })
	goRun(func() {
		if srvd.Path != "" && fl == nil {
			watchLoop(peersCtx, h, srvd.Path, log)
		}
	})
	goRun(func() {
		if s.lock != nil {
			serveLocalChannel(peersCtx, h, s.MCP, srvd.Path, og.key != nil, log)
		}
	})
	goRun(func() { s.peers.Run(peersCtx) })
	// A signature close to expiring is renewed before the server answers,
	// so /health and the tools never report the old one.
	renew(h, log)
	goRun(func() { renewLoop(peersCtx, h, log) })
	goRun(func() {
		if s.proposals != nil {
			tidyProposals(peersCtx, s.proposals, log)
		}
	})
	identities := newIdentityChecker(h, c.Identity, c.Version, srvd.Path, peerDir, log)
	goRun(func() { identities.Run(peersCtx) })
	if fl != nil && c.CheckSources == 0 && c.HealthFile == "" {
		// A replica that neither checks its sources nor reads a health
		// file says of them what the origin does.
		checker.followed(fl.Health())
		fl.SetPublishHealth(checker.followed)
	}
	goRun(func() {
		if fl != nil {
			fl.SetPublish(followPublisher(h, c))
			log.Info("following the origin as a read replica", "origin", c.Follow.URL, "refresh", c.Follow.Refresh, "cache", c.Follow.Cache)
			fl.Run(peersCtx)
		}
	})
	s.stopPeers = func() {
		stopPeers()
		for _, ch := range done {
			<-ch
		}
	}
	s.sources, s.healthFile = checker.health, checker.published
	if fl != nil {
		s.follow = followHealth(fl, time.Now)
	}
}

// replicaOf is the origin a read replica follows, "" for any other server.
func replicaOf(c *Config) string {
	if c.Follow == nil {
		return ""
	}
	return c.Follow.URL
}
