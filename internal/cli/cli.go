// Package cli implements the 3gs command line: one binary, subcommands,
// every flag with an environment-variable twin. It is a package rather than
// code in main so tests run commands in-process with their own streams and
// environment.
//
// Parsing is cobra's (with pflag): flags go anywhere before a "--", shell
// completion comes from `3gs completion SHELL`, and a mistyped command gets
// "Did you mean". The commands themselves stay a plain table below, so help,
// the README test and the host-configuration test read one list.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/three-good-sources/3gs/internal/matcher/typo"
)

// Env is what a command may touch: its streams and its environment.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Environ lists the environment as KEY=VALUE (os.Environ), so that
	// serve and doctor can name a THREEGS_ variable no command reads (a
	// misspelling); nil skips that check.
	Environ func() []string
}

// Exit codes.
const (
	ExitOK    = 0
	ExitFail  = 1 // the command ran and found a problem
	ExitUsage = 2 // the command line itself is wrong
	// ExitUnavailable: the command could not do its work for now (3gs
	// check found the network unavailable); run it again later.
	ExitUnavailable = 3
	// ExitInterrupted: Ctrl-C (or SIGTERM) stopped a command, 128+SIGINT
	// as shells report it.
	ExitInterrupted = 130
)

type command struct {
	name    string
	args    string // argument synopsis
	summary string
	flags   func(*Flags) // declares the command's flags; nil for none
	run     func(ctx context.Context, env *Env, f *Flags) int
}

func commands() []command {
	return []command{
		{"serve", "", "serve MCP on stdin/stdout, or over HTTP with --http (the default when no command is given)", serveFlags, runServe},
		{"query", "TEXT...", "show which category a query matches and, with --explain, why", queryFlags, runQuery},
		{"validate", "[PATH...]", "check registry files against the schema and the registry rules", validateFlags, runValidate},
		{"keygen", "", "create a curator key (Ed25519) and print its public key", keygenFlags, runKeygen},
		{"sign", "[PATH]", "sign a registry file with the curator key, writing PATH.sig", signFlags, runSign},
		{"init", "DIR", "create a curator node in DIR: a key, a starter registry naming it, and its signature", initFlags, runInit},
		{"endorse", "[PATH]", "add or replace an endorsement of another curator (or remove one with --remove), re-signing the registry with --key-file", endorseFlags, runEndorse},
		{"category", "add|edit|remove SLUG", "add, replace or remove one category from its JSON (--file, stdin or --editor), recorded in the audit log and signed; through the running server when one holds the registry", nil, nil},
		{"token", "new|list|revoke ...", "manage the tokens that unlock user and admin tools", nil, nil},
		{"schema", "diff ...", "compare two versions of the tool contract and say which changes break clients", nil, nil},
		{"check", "[PATH]", "check that every source URL still answers: ok, redirected (with the edit to make), gone, error or changed; exit 1 when any is gone or failing", checkFlags, runCheck},
		{"misses", "FILE", "list the queries a query log (serve --query-log) shows got no confident answer, grouped by their closest category: the curator's to-do list", missesFlags, runMisses},
		{"proposals", "list|show|accept|reject|vote ...", "read and decide the changes the public proposed to a registry (propose_change), or vote on another node's as a curator it endorses", nil, nil},
		{"audit", "verify|log|migrate ...", "check, list and migrate a registry's audit log, the signed record of every change", nil, nil},
		{"export", "", "write the registry for people without a server: the pages of serve --http as a static site (--format html --out DIR), or one README-style Markdown file (--format markdown)", exportFlags, runExport},
		{"verify", "[PATH [SIGNATURE]]", "check a registry against its signature (the embedded one when no PATH is given)", verifyFlags, runVerify},
		{"doctor", "", "check a deployment with serve's flags and environment: registry, signature, key, tokens, editing, HTTP address; one line per check with the fix", serveFlags, runDoctor},
		{"health", "", "ask a running HTTP server's /health and exit 0 when it answers ok (the container image's health check: the image has no curl)", healthFlags, runHealth},
		{"version", "", "print the version, commit and Go version", nil, runVersion},
		{"help", "[COMMAND | all]", "show help for 3gs, for one command (its flags, their environment variables and defaults), or for all of them", nil, runHelp},
	}
}

// verbGroups are the commands made of verbs, each with flags of its own.
func verbGroups() map[string][]command {
	return map[string][]command{"token": tokenSubcommands, "schema": schemaSubcommands, "audit": auditSubcommands, "proposals": proposalsSubcommands, "category": categorySubcommands}
}

// Run executes the command line args (without the program name) and
// returns the process exit code.
func Run(ctx context.Context, args []string, env *Env) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "--") && args[0] != "--help" && args[0] != "--version" {
		args = append([]string{"serve"}, args...) // `3gs` and `3gs --registry X` serve
	}
	if args[0] == "--version" {
		args[0] = "version"
	}
	code := ExitOK
	root := newRoot(ctx, env, &code)
	root.SetArgs(args)
	if cmd, err := root.ExecuteC(); err != nil {
		usageError(env.Stderr, cmd, err)
		return ExitUsage
	}
	return code
}

// newRoot builds the cobra tree from the command table. Each command's run
// stores its exit code in *code; an error out of cobra is always a usage
// error (a bad flag, an unknown command or verb).
func newRoot(ctx context.Context, env *Env, code *int) *cobra.Command {
	root := &cobra.Command{
		Use:           "3gs",
		Short:         "three good sources, a curated MCP server",
		SilenceErrors: true,
		SilenceUsage:  true,
		// "Did you mean": within two edits, or a prefix of the name.
		SuggestionsMinimumDistance: 2,
	}
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	// An unknown command is worded here, with cobra's suggestions; cobra
	// checks a root's arguments only when it can run, and we always name
	// a command (Run puts serve first), so Run is never reached.
	root.Args = func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return &nameError{what: "command", name: args[0], suggestions: root.SuggestionsFor(args[0])}
		}
		return nil
	}
	root.Run = func(*cobra.Command, []string) { usage(env.Stderr); *code = ExitUsage }
	cobraHelp := root.HelpFunc() // for cobra's own completion commands
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		if !help(cmd.OutOrStdout(), env, strings.Fields(cmd.CommandPath())[1:]) {
			cobraHelp(cmd, args)
		}
	})
	for _, c := range commands() {
		cc := leaf(ctx, env, c, code)
		if verbs, group := verbGroups()[c.name]; group {
			group := c.name
			cc.SuggestionsMinimumDistance = 2
			cc.Args = func(_ *cobra.Command, args []string) error {
				if len(args) > 0 {
					return &nameError{group: group, what: "verb", name: args[0], suggestions: cc.SuggestionsFor(args[0])}
				}
				return nil
			}
			cc.Run = func(*cobra.Command, []string) {
				verbUsage(env.Stderr, group, verbs)
				*code = ExitUsage
			}
			for _, v := range verbs {
				v.name = group + " " + v.name
				cc.AddCommand(leaf(ctx, env, v, code))
			}
		}
		if c.name == "help" {
			// help also knows cobra's own commands (completion).
			cc.Run = func(_ *cobra.Command, args []string) {
				if target, rest, err := root.Find(args); len(args) > 0 && err == nil && len(rest) == 0 && target != root {
					if _, ours := find(args); !ours {
						cobraHelp(target, nil)
						return
					}
				}
				*code = runHelp(ctx, env, &Flags{args: args})
			}
			root.SetHelpCommand(cc)
			continue
		}
		root.AddCommand(cc)
	}
	// Now rather than at Execute, so the README test finds them.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

// leaf is the cobra command for one table entry. Its flags are the ones
// the entry declares, with their environment twins as defaults.
func leaf(ctx context.Context, env *Env, c command, code *int) *cobra.Command {
	words := strings.Fields(c.name)
	f := newFlags(c, env)
	cc := &cobra.Command{
		Use:                   words[len(words)-1] + " " + c.args,
		Short:                 c.summary,
		DisableFlagsInUseLine: true,
		Run: func(_ *cobra.Command, args []string) {
			f.args = args
			*code = interruptible(ctx, env, c, f)
		},
	}
	cc.Flags().AddFlagSet(f.fs)
	return cc
}

// nameError is an unknown command, or an unknown verb of a group.
// interruptible runs command c. serve handles a signal itself (it drains
// requests and exits 0); every other command ends at once when ctx is
// cancelled, even if it is blocked in a read or a long loop.
func interruptible(ctx context.Context, env *Env, c command, f *Flags) int {
	if c.name == "serve" {
		return c.run(ctx, env, f)
	}
	done := make(chan int, 1)
	go func() { done <- c.run(ctx, env, f) }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
		fmt.Fprintf(env.Stderr, "3gs %s: interrupted\n", c.name)
		return ExitInterrupted
	}
}

type nameError struct {
	group, what, name string
	suggestions       []string
}

func (e *nameError) Error() string { return fmt.Sprintf("unknown %s %q", e.what, e.name) }

// usageError says what is wrong with the command line, in a few lines with
// a suggestion, and where the full help is.
func usageError(w io.Writer, cmd *cobra.Command, err error) {
	var ne *nameError
	switch {
	case errors.As(err, &ne) && ne.group != "":
		fmt.Fprintf(w, "3gs %s: %v\n%s\n", ne.group, err, ne.didYouMean())
		verbUsage(w, ne.group, verbGroups()[ne.group])
	case errors.As(err, &ne) || !cmd.HasParent():
		fmt.Fprintf(w, "3gs: %v\n%sRun '3gs help' for the commands.\n", err, ne.didYouMean())
	default:
		path := cmd.CommandPath()
		c, _ := find(strings.Fields(path)[1:])
		fmt.Fprintf(w, "%s: %v\n%sUsage: %s %s\nRun '3gs help %s' for every flag and its environment variable.\n",
			path, err, flagSuggestion(cmd, err), path, strings.TrimSpace("[flags] "+c.args), strings.TrimPrefix(path, "3gs "))
	}
}

// didYouMean is the suggestion line, if any; e may be nil.
func (e *nameError) didYouMean() string {
	if e == nil || len(e.suggestions) == 0 {
		return ""
	}
	return "Did you mean " + strings.Join(e.suggestions, " or ") + "?\n"
}

// find is the table entry that words (after "3gs") name: a command, or a
// verb of a command group.
func find(words []string) (command, bool) {
	if len(words) == 0 || len(words) > 2 {
		return command{}, false
	}
	for _, c := range commands() {
		if c.name != words[0] {
			continue
		}
		if len(words) == 1 {
			return c, true
		}
		for _, v := range verbGroups()[c.name] {
			if v.name == words[1] {
				v.name = c.name + " " + v.name
				return v, true
			}
		}
	}
	return command{}, false
}

// help writes the help for the command words name: the command list for
// none, the verbs of a group, or a command's flags. It is false when words
// name none of 3gs's own commands.
func help(w io.Writer, env *Env, words []string) bool {
	if len(words) == 0 {
		usage(w)
		return true
	}
	if len(words) == 1 && words[0] == "all" {
		helpAll(w, env)
		return true
	}
	c, ok := find(words)
	if !ok {
		return false
	}
	if verbs, group := verbGroups()[c.name]; group {
		verbUsage(w, c.name, verbs)
		return true
	}
	newFlags(c, env).usage(w, c)
	return true
}

func usage(w io.Writer) {
	fmt.Fprint(w, "3gs: three good sources, a curated MCP server\n\nUsage: 3gs COMMAND [flags] [args]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-10s %s\n", "completion", "print a shell completion script: 3gs completion bash|zsh|fish|powershell")
	fmt.Fprintln(w, "\nFlags go before or after the arguments; after a lone -- everything is an argument.")
	fmt.Fprintln(w, "Run '3gs help COMMAND' for a command's flags, their environment variables and defaults,")
	fmt.Fprintln(w, "or '3gs help all' for every command's.")
}

// helpAll is the command list, then each command's help in the table's
// order, a group's verbs each in turn: every command, flag and
// environment variable on one page. A command whose flags are another's
// (doctor takes serve's) says so rather than listing them again.
func helpAll(w io.Writer, env *Env) {
	usage(w)
	seen := map[string]string{} // the flags, as listed, → the first command listing them
	one := func(c command) {
		fmt.Fprintf(w, "\n%s\n\n", strings.Repeat("-", 72))
		f := newFlags(c, env)
		var sig strings.Builder
		f.fs.VisitAll(func(fl *pflag.Flag) { sig.WriteString(fl.Name + "=" + f.twins[fl.Name] + "=" + fl.Usage + "\n") })
		if first, ok := seen[sig.String()]; ok && sig.Len() > 0 {
			fmt.Fprintf(w, "Usage: 3gs %s %s\n\n%s.\n\nFlags: those of 3gs %s, above.\n", c.name, strings.TrimSpace("[flags] "+c.args), capitalize(c.summary), first)
			return
		}
		seen[sig.String()] = c.name
		f.usage(w, c)
	}
	for _, c := range commands() {
		if c.name == "help" {
			continue
		}
		if verbs, group := verbGroups()[c.name]; group {
			for _, v := range verbs {
				v.name = c.name + " " + v.name
				one(v)
			}
			continue
		}
		one(c)
	}
}

func runHelp(_ context.Context, env *Env, f *Flags) int {
	if help(env.Stdout, env, f.Args()) {
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "3gs help: no command %q\n\n", strings.Join(f.Args(), " "))
	if _, group := verbGroups()[f.Args()[0]]; group {
		verbUsage(env.Stderr, f.Args()[0], verbGroups()[f.Args()[0]])
	} else {
		usage(env.Stderr)
	}
	return ExitUsage
}

func verbUsage(w io.Writer, group string, verbs []command) {
	fmt.Fprintf(w, "Usage: 3gs %s VERB [flags]\n\nVerbs:\n", group)
	for _, c := range verbs {
		fmt.Fprintf(w, "  %-7s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun '3gs help %s VERB' for a verb's flags and their environment variables.\n", group)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// flagSuggestion is "Did you mean --key-file?" for an unknown flag of cmd
// that is within two edits of some of its flags (a transposition counts
// one), or a prefix of them: "" when none is, or err is about something
// else.
func flagSuggestion(cmd *cobra.Command, err error) string {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, "=")
	var near []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if typo.Distance(name, f.Name) <= 2 || len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			near = append(near, "--"+f.Name)
		}
	})
	return (&nameError{suggestions: near}).didYouMean()
}
