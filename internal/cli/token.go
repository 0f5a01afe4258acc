package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/signature"
)

// tokenSubcommands are the verbs of `3gs token`.
var tokenSubcommands = []command{
	{"new", "", "make a token, print it once, and store its hash", func(f *Flags) {
		tokensFlag(f)
		o := options[tokenOptions](f)
		f.StringVar(&o.tier, "tier", "THREEGS_TOKEN_TIER", "", "what the token unlocks: user (contributor tools) or admin (every tool)")
		f.StringVar(&o.name, "name", "THREEGS_TOKEN_NAME", "", "who holds it: names the caller in the audit log, and is how it is revoked")
	}, needTokens(runTokenNew)},
	{"list", "", "list the tokens: name, tier, creation time (never the tokens)", tokensFlag, needTokens(runTokenList)},
	{"revoke", "NAME", "remove a token; a running server stops accepting it on SIGHUP", tokensFlag, needTokens(runTokenRevoke)},
}

// tokenOptions are the token verbs' flags (tier and name: new only).
type tokenOptions struct{ tokens, tier, name string }

func tokensFlag(f *Flags) {
	f.StringVar(&options[tokenOptions](f).tokens, "tokens", "THREEGS_TOKENS", "", "the tokens file (required); created if missing, mode 0600")
}

// needTokens refuses a token verb run without a tokens file.
func needTokens(run func(context.Context, *Env, *Flags) int) func(context.Context, *Env, *Flags) int {
	return func(ctx context.Context, env *Env, f *Flags) int {
		if options[tokenOptions](f).tokens == "" {
			fmt.Fprintf(env.Stderr, "%s: name the tokens file with --tokens PATH (or THREEGS_TOKENS), the file serve reads with --tokens\n", f.name)
			return ExitUsage
		}
		return run(ctx, env, f)
	}
}

func runTokenNew(_ context.Context, env *Env, f *Flags) int {
	o := options[tokenOptions](f)
	tier, ok := gen.ParseTier(o.tier)
	if !ok || tier == gen.TierPublic {
		fmt.Fprintf(env.Stderr, "3gs token new: --tier must be user or admin, got %q\n", o.tier)
		return ExitUsage
	}
	name := o.name
	if name == "" || len(f.Args()) > 0 {
		fmt.Fprintln(env.Stderr, "3gs token new: name the holder with --name NAME (letters, digits, . _ @ -), e.g. --name alice-laptop")
		return ExitUsage
	}
	path := o.tokens
	token, err := auth.Add(path, name, tier, time.Now())
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs token new: %v\n", err)
		return ExitFail
	}
	fmt.Fprintln(env.Stdout, token)
	fmt.Fprintf(env.Stderr, "Made %s token %q in %s. The token above is shown this once; only its SHA-256 is stored.\n"+
		"Give it to the caller: as THREEGS_TOKEN for a stdio server, or in params._meta[\"io.3gs/token\"].\n"+
		"A running server accepts it after SIGHUP to that server alone: kill -HUP PID, with the PID of the 3gs serve that reads %s (under systemd: systemctl kill -s HUP 3gs), not every 3gs on the machine.\n", tier, name, signature.ShellQuote(path), signature.ShellQuote(path))
	return ExitOK
}

func runTokenList(_ context.Context, env *Env, f *Flags) int {
	path := options[tokenOptions](f).tokens
	// A tokens file that does not exist holds no tokens for serve, but
	// listing one is almost always a mistyped path: say so.
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(env.Stderr, "3gs token list: %s does not exist. Check the path (serve reads the file named by --tokens or THREEGS_TOKENS); 3gs token new --tokens %s creates it with its first token.\n", path, signature.ShellQuote(path))
		return ExitFail
	}
	doc, err := auth.ReadFile(path)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs token list: %v\n", err)
		return ExitFail
	}
	if len(doc.Tokens) == 0 {
		fmt.Fprintf(env.Stdout, "No tokens in %s.\n", options[tokenOptions](f).tokens)
		return ExitOK
	}
	fmt.Fprintf(env.Stdout, "%-24s %-6s %s\n", "NAME", "TIER", "CREATED")
	for _, t := range doc.Tokens {
		fmt.Fprintf(env.Stdout, "%-24s %-6s %s\n", t.Name, t.Tier, t.Created)
	}
	return ExitOK
}

func runTokenRevoke(_ context.Context, env *Env, f *Flags) int {
	if len(f.Args()) != 1 {
		fmt.Fprintln(env.Stderr, "3gs token revoke: name one token, e.g. 3gs token revoke --tokens tokens.json alice-laptop")
		return ExitUsage
	}
	if err := auth.Revoke(options[tokenOptions](f).tokens, f.Args()[0]); err != nil {
		fmt.Fprintf(env.Stderr, "3gs token revoke: %v\n", err)
		return ExitFail
	}
	fmt.Fprintf(env.Stdout, "Revoked %q. A running server stops accepting it after SIGHUP to that server alone: kill -HUP PID, with the PID of the 3gs serve that reads %s.\n", f.Args()[0], signature.ShellQuote(options[tokenOptions](f).tokens))
	return ExitOK
}
