package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/stdio"
	"github.com/three-good-sources/3gs/internal/tools"
)

func serveFlags(f *Flags) {
	f.String("registry", "REGISTRY_PATH", "", "registry file to serve; none means the embedded registry.json")
	f.String("match-threshold", "MATCH_THRESHOLD", strconv.FormatFloat(tools.DefaultThreshold, 'f', -1, 64), "lowest match score (0 to 1) get_sources accepts when a call sets no threshold")
	f.String("matcher", "THREEGS_MATCHER", "index", "matching algorithm: index, or baseline (the old whole-string matcher, kept for comparison)")
	f.String("max-message-bytes", "THREEGS_MAX_MESSAGE_BYTES", strconv.Itoa(stdio.DefaultMaxMessageBytes), "longest accepted message in bytes; longer ones get -32600")
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

	reg, source, ok := loadRegistry(env, "serve", f.Value("registry"))
	if !ok {
		return ExitFail
	}
	if err := gen.Pretouch(); err != nil {
		log.Warn("sonic pretouch failed; the first calls will be slower", "err", err)
	}
	handlers := tools.New(reg, newMatcher(reg), threshold)
	srv := mcp.NewServer(handlers, buildVersion(), log)
	log.Info("serving MCP on stdio", "registry", source, "version", reg.Version(), "categories", len(reg.Categories()), "sha256", reg.SHA256())
	err = stdio.Serve(ctx, srv.NewSession(), env.Stdin, env.Stdout, stdio.Options{MaxMessageBytes: maxBytes, Log: log})
	if err != nil {
		log.Error("stdio failed", "err", err)
		return ExitFail
	}
	log.Info("stdin closed; exiting")
	return ExitOK
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
