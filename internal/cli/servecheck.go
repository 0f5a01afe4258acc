package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/filelock"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
	"github.com/three-good-sources/3gs/internal/tools"
)

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
func checkProvenance(env *Env, c *serveConfig, s *served) (ed25519.PrivateKey, bool) {
	log := c.log
	st := s.sig
	refused := st.Refuse(s.reg)
	switch {
	case refused != nil && !c.allowUnsigned:
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
	case s.path != "" && st.Stale(time.Now()) != nil && !c.allowExpired:
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
	key, from, err := signingKey(env, c.key, func(msg string) { log.Warn(msg) })
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

// loadTokens reads the tokens file at path (--tokens) and re-reads it on SIGHUP for as long as the
// process runs. A bad file at start stops the server; a bad file on SIGHUP
// is logged and the tokens in use stay. A stdio server also checks its
// session token (THREEGS_TOKEN) against the file, at start and on each
// reload, so that a mistyped or revoked token is reported rather than
// silently serving a public session.
func loadTokens(ctx context.Context, env *Env, path string, log *slog.Logger, stdio bool) (*auth.Keyring, bool) {
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
