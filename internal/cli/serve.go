package cli

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/stdio"
	"github.com/three-good-sources/3gs/internal/tools"
)

func serveFlags(f *Flags) {
	f.String("registry", "REGISTRY_PATH", "", "registry file to serve; none means the embedded registry.json")
	f.String("match-threshold", "MATCH_THRESHOLD", strconv.FormatFloat(tools.DefaultThreshold, 'f', -1, 64), "lowest match score (0 to 1) get_sources accepts when a call sets no threshold")
	f.String("matcher", "THREEGS_MATCHER", "index", "matching algorithm: index, or baseline (the old whole-string matcher, kept for comparison)")
	f.String("max-message-bytes", "THREEGS_MAX_MESSAGE_BYTES", strconv.Itoa(stdio.DefaultMaxMessageBytes), "longest accepted message in bytes; longer ones get -32600")
	keyFlag(f, "the curator's secret key file; it must be the key the registry names as curator.pubkey")
	f.String("tokens", "THREEGS_TOKENS", "", "tokens file (made with 3gs token new) whose tokens unlock user and admin tools; re-read on SIGHUP. None: every caller is public")
	f.String("audit-log", "THREEGS_AUDIT_LOG", "", "JSON Lines file every registry change is appended to; none means REGISTRY.audit.jsonl beside the registry file")
	f.Bool("allow-unsigned", "THREEGS_ALLOW_UNSIGNED", "serve even when the registry's signature file does not verify; get_provenance then reports it as not verified")
	f.String("log-format", "THREEGS_LOG_FORMAT", "text", "log format on stderr: text or json")
	f.String("log-level", "THREEGS_LOG_LEVEL", "info", "log level: debug, info, warn or error")
}

// runServe serves MCP on stdin/stdout. Logs go to stderr only: stdout
// carries nothing but protocol messages.
func runServe(ctx context.Context, env *Env, f *Flags) int {
	if len(f.Args()) > 0 {
		fmt.Fprintf(env.Stderr, "3gs serve: unexpected argument %q; the registry is chosen with --registry PATH\n", f.Args()[0])
		return ExitUsage
	}
	threshold, err := f.Threshold("match-threshold")
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs serve: %v\n", err)
		return ExitUsage
	}
	newMatcher, err := matcherNamed(f.Value("matcher"))
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs serve: %v\n", err)
		return ExitUsage
	}
	maxBytes, err := strconv.Atoi(f.Value("max-message-bytes"))
	if err != nil || maxBytes < 1024 {
		fmt.Fprintf(env.Stderr, "3gs serve: --max-message-bytes (THREEGS_MAX_MESSAGE_BYTES) must be a whole number of at least 1024, got %q\n", f.Value("max-message-bytes"))
		return ExitUsage
	}
	log, err := newLogger(env, f.Value("log-format"), f.Value("log-level"))
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs serve: %v\n", err)
		return ExitUsage
	}

	srvd, ok := loadServed(env, "serve", f.Value("registry"))
	if !ok {
		return ExitFail
	}
	key, ok := checkProvenance(env, f, log, srvd)
	if !ok {
		return ExitFail
	}
	keyring, ok := loadKeyring(ctx, env, f, log)
	if !ok {
		return ExitFail
	}
	reg := srvd.reg
	if err := gen.Pretouch(); err != nil {
		log.Warn("sonic pretouch failed; the first calls will be slower", "err", err)
	}
	cfg := tools.Config{Registry: reg, Matcher: newMatcher(reg), Threshold: threshold, Signature: srvd.sig, Files: srvd.files}
	if srvd.path != "" {
		audit := f.Value("audit-log")
		if audit == "" {
			audit = srvd.path + ".audit.jsonl"
		}
		cfg.Edit = &tools.EditConfig{Path: srvd.path, Key: key, AuditLog: audit, NewMatcher: newMatcher, AllowUnsigned: flagBool(f, "allow-unsigned")}
	}
	srv := mcp.NewServer(mcp.Config{Handlers: tools.New(cfg), Version: buildVersion(), Log: log, Keyring: keyring})
	log.Info("serving MCP on stdio", "registry", srvd.name, "version", reg.Version(), "categories", len(reg.Categories()), "sha256", reg.SHA256(), "signed", srvd.sig.Signed(), "verified", srvd.sig.Verified)
	err = stdio.Serve(ctx, srv.NewSessionWithToken(env.Getenv(stdioTokenEnv)), env.Stdin, env.Stdout, stdio.Options{MaxMessageBytes: maxBytes, Log: log})
	if err != nil {
		log.Error("stdio failed", "err", err)
		return ExitFail
	}
	log.Info("stdin closed; exiting")
	return ExitOK
}

// checkProvenance applies the start-up policy on signatures and keys. A
// signature file that does not verify stops the server unless
// --allow-unsigned says to serve the registry marked unverified; a missing
// one is served as unsigned. A configured key must be the curator's, or
// what it signs later could never verify.
func checkProvenance(env *Env, f *Flags, log *slog.Logger, s *served) (ed25519.PrivateKey, bool) {
	st := s.sig
	switch {
	case st.Signed() && !st.Verified && !flagBool(f, "allow-unsigned"):
		fmt.Fprintf(env.Stderr, "3gs serve: refusing to serve %s: its signature does not verify: %v\n"+
			"If the registry was changed on purpose, its curator re-signs it: 3gs sign --key-file KEY %s\n"+
			"To serve it anyway, reported as not verified by get_provenance, add --allow-unsigned (THREEGS_ALLOW_UNSIGNED=1).\n",
			s.name, st.Problem, signature.ShellQuote(s.files.Registry))
		return nil, false
	case st.Signed() && !st.Verified:
		log.Warn("serving a registry whose signature does not verify (--allow-unsigned)", "registry", s.name, "problem", st.Problem.Error())
	case st.Verified:
		log.Info("registry signature verified", "signer", pkarr.URI(st.Signer), "signed_at", st.SignedAt)
	default:
		if _, ok := s.reg.CuratorKey(); ok {
			log.Warn("registry names a curator key but has no signature file; serving it unsigned", "registry", s.name, "fix", "3gs sign --key-file KEY "+signature.ShellQuote(s.files.Registry))
		} else {
			log.Info("serving an unsigned registry: its curator key is "+registry.Placeholder, "registry", s.name)
		}
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

// stdioTokenEnv holds the token of a stdio session: the host that starts
// 3gs sets it, since a stdio client has no header to send one in.
const stdioTokenEnv = "THREEGS_TOKEN"

// loadKeyring reads --tokens and re-reads it on SIGHUP for as long as the
// process runs. A bad file at start stops the server; a bad file on SIGHUP
// is logged and the tokens in use stay.
func loadKeyring(ctx context.Context, env *Env, f *Flags, log *slog.Logger) (*auth.Keyring, bool) {
	path := f.Value("tokens")
	if path == "" {
		if env.Getenv(stdioTokenEnv) != "" {
			log.Warn(stdioTokenEnv + " is set but no --tokens file is given, so the token cannot be checked; every caller is public")
		}
		return nil, true
	}
	k, err := auth.LoadKeyring(path)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs serve: --tokens: %v\nFix the file, or make a new one with 3gs token new --tokens %s ...\n", err, signature.ShellQuote(path))
		return nil, false
	}
	counts := k.Count()
	log.Info("tokens loaded", "file", path, "user", counts[gen.TierUser], "admin", counts[gen.TierAdmin])
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
				log.Error("SIGHUP: tokens file not reloaded; the tokens in use stay", "file", path, "err", err)
				continue
			}
			counts := k.Count()
			log.Info("SIGHUP: tokens reloaded", "file", path, "user", counts[gen.TierUser], "admin", counts[gen.TierAdmin])
		}
	}()
	return k, true
}

func flagBool(f *Flags, name string) bool {
	v, _ := strconv.ParseBool(f.Value(name))
	return v
}

func newLogger(env *Env, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level (THREEGS_LOG_LEVEL) must be debug, info, warn or error, got %q", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(env.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(env.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format (THREEGS_LOG_FORMAT) must be text or json, got %q", format)
}
