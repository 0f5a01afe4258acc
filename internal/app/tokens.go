package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// StdioTokenEnv holds the token of a stdio session: the host that starts
// 3gs sets it, since a stdio client has no header to send one in.
const StdioTokenEnv = "THREEGS_TOKEN"

// loadTokens reads the tokens file at path (--tokens) and re-reads it on SIGHUP for as long as the
// process runs. A bad file at start stops the server; a bad file on SIGHUP
// is logged and the tokens in use stay. A stdio server also checks its
// session token (THREEGS_TOKEN) against the file, at start and on each
// reload, so that a mistyped or revoked token is reported rather than
// silently serving a public session.
func loadTokens(ctx context.Context, path, session string, log *slog.Logger, stdio bool) (*auth.Keyring, error) {
	if session != "" && !stdio {
		log.Warn(StdioTokenEnv + " is set but only a stdio server reads it; over HTTP each client sends its own token as Authorization: Bearer")
		session = ""
	}
	if path == "" {
		if session != "" {
			log.Warn(StdioTokenEnv+" is set but no --tokens file is given, so the token cannot be checked; every caller is public", "fix", "add --tokens FILE (THREEGS_TOKENS), the file 3gs token new wrote")
		}
		return nil, nil
	}
	q := signature.ShellQuote(path)
	k, err := auth.LoadKeyring(path)
	if err != nil {
		problem, fix := TokensProblem(path, err)
		return nil, fmt.Errorf("--tokens (THREEGS_TOKENS): %s\nFix: %s.", problem, fix)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		log.Warn("the tokens file does not exist, so no token is accepted and every caller is public", "file", path, "fix", "check --tokens (THREEGS_TOKENS), or create the file: 3gs token new --tokens "+q+" --tier admin --name NAME")
	}
	checkSession := func() {
		if session != "" && !k.Identify(session).Authenticated() {
			log.Warn(StdioTokenEnv+" matches no token in the tokens file, so this stdio session is public", "file", path, "fix", "check the value of "+StdioTokenEnv+"; 3gs token list --tokens "+q+" names the tokens the file holds")
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
				_, fix := TokensProblem(path, err)
				log.Error("SIGHUP: tokens file not reloaded; the tokens in use stay", "file", path, "err", err, "fix", fix)
				continue
			}
			counts := k.Count()
			log.Info("SIGHUP: tokens reloaded", "file", path, "user", counts[gen.TierUser], "admin", counts[gen.TierAdmin])
			checkSession()
		}
	}()
	return k, nil
}

// TokensProblem says what is wrong with the tokens file at path and the
// fix that fits the cause. Only a missing file calls for 3gs token new: a
// new file over one that is unreadable or damaged would drop its tokens.
func TokensProblem(path string, err error) (problem, fix string) {
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

// cwd is the working directory, for advice on relative paths.
func cwd() string {
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return "the current directory"
}
