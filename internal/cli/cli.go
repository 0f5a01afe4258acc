// Package cli implements the 3gs command line: one binary, subcommands,
// every flag with an environment-variable twin. It is a package rather than
// code in main so tests run commands in-process with their own streams and
// environment.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Env is what a command may touch: its streams and its environment.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Exit codes.
const (
	ExitOK    = 0
	ExitFail  = 1 // the command ran and found a problem
	ExitUsage = 2 // the command line itself is wrong
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
		{"token", "new|list|revoke ...", "manage the tokens that unlock user and admin tools", nil, runToken},
		{"schema", "diff ...", "compare two versions of the tool contract and say which changes break clients", nil, runSchema},
		{"verify", "[PATH [SIGNATURE]]", "check a registry against its signature (the embedded one when no PATH is given)", verifyFlags, runVerify},
		{"doctor", "", "check a deployment with serve's flags and environment: registry, signature, key, tokens, editing, HTTP address; one line per check with the fix", serveFlags, runDoctor},
		{"version", "", "print the version, commit and Go version", nil, runVersion},
		{"help", "[COMMAND]", "show help for 3gs or for one command", nil, runHelp},
	}
}

// Run executes the command line args (without the program name) and
// returns the process exit code.
func Run(ctx context.Context, args []string, env *Env) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "--") && args[0] != "--help" && args[0] != "--version" {
		args = append([]string{"serve"}, args...) // `3gs` and `3gs --registry X` serve
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(env.Stderr, "3gs: unknown command %q\n\n", name)
		usage(env.Stderr)
		return ExitUsage
	}
	f := newFlags(c, env)
	if code, ok := f.parse(c, args[1:]); !ok {
		return code
	}
	return c.run(ctx, env, f)
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func usage(w io.Writer) {
	fmt.Fprint(w, "3gs: three good sources, a curated MCP server\n\nUsage: 3gs COMMAND [flags] [args]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun '3gs help COMMAND' for a command's flags and their environment variables.")
}

func runHelp(_ context.Context, env *Env, f *Flags) int {
	if f.fs == nil || f.fs.NArg() == 0 {
		usage(env.Stdout)
		return ExitOK
	}
	c, ok := lookup(f.fs.Arg(0))
	if !ok {
		fmt.Fprintf(env.Stderr, "3gs help: unknown command %q\n\n", f.fs.Arg(0))
		usage(env.Stderr)
		return ExitUsage
	}
	if verbs, group := verbGroups()[c.name]; group {
		if f.fs.NArg() == 1 {
			verbUsage(env.Stdout, c.name, verbs)
			return ExitOK
		}
		var found bool
		if c, found = lookupVerb(c.name, f.fs.Arg(1)); !found {
			fmt.Fprintf(env.Stderr, "3gs help: 3gs %s has no verb %q\n\n", f.fs.Arg(0), f.fs.Arg(1))
			verbUsage(env.Stderr, f.fs.Arg(0), verbs)
			return ExitUsage
		}
	}
	h := newFlags(c, env)
	h.fs.SetOutput(env.Stdout)
	h.fs.Usage()
	return ExitOK
}

// lookupVerb finds the verb name of the command group, named "group verb"
// for its usage and messages.
func lookupVerb(group, name string) (command, bool) {
	for _, v := range verbGroups()[group] {
		if v.name == name {
			v.name = group + " " + v.name
			return v, true
		}
	}
	return command{}, false
}

// verbGroups are the commands made of verbs, each with flags of its own.
func verbGroups() map[string][]command {
	return map[string][]command{"token": tokenSubcommands, "schema": schemaSubcommands}
}

// Flags is a command's flag set. Each flag may have an environment twin that
// supplies its value when the flag is not given; an explicit flag wins.
type Flags struct {
	fs    *flag.FlagSet
	env   *Env
	twins map[string]string // flag name → environment variable
	defs  map[string]string // flag name → built-in default, for help
}

func newFlags(c command, env *Env) *Flags {
	f := &Flags{fs: flag.NewFlagSet("3gs "+c.name, flag.ContinueOnError), env: env, twins: map[string]string{}, defs: map[string]string{}}
	f.fs.SetOutput(env.Stderr)
	if c.flags != nil {
		c.flags(f)
	}
	f.fs.Usage = func() { f.usage(c) }
	return f
}

// parse reads the command's flags. --help prints the full usage (exit 0);
// a bad flag prints the problem and a short usage (exit 2), not every flag
// the command has.
func (f *Flags) parse(c command, args []string) (code int, ok bool) {
	var discard strings.Builder
	f.fs.SetOutput(&discard)
	f.fs.Usage = func() {}
	err := f.fs.Parse(args)
	f.fs.SetOutput(f.env.Stderr)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		f.usage(c)
		return ExitOK, false
	}
	fmt.Fprintf(f.env.Stderr, "%s: %v\nUsage: %s %s\nRun '3gs help %s' for every flag and its environment variable.\n",
		f.fs.Name(), err, f.fs.Name(), strings.TrimSpace("[flags] "+c.args), strings.TrimPrefix(f.fs.Name(), "3gs "))
	return ExitUsage, false
}

// String declares a string flag with an environment twin.
func (f *Flags) String(name, envVar, def, usage string) {
	f.twins[name], f.defs[name] = envVar, def
	if v := f.env.Getenv(envVar); v != "" {
		def = v
	}
	f.fs.String(name, def, usage)
}

// Bool declares a boolean flag with an environment twin; the twin is true
// when set to 1, t, true (any case), as strconv.ParseBool reads it.
func (f *Flags) Bool(name, envVar string, usage string) {
	f.twins[name], f.defs[name] = envVar, "false"
	def, _ := strconv.ParseBool(f.env.Getenv(envVar))
	f.fs.Bool(name, def, usage)
}

// Threshold is the value of a match-threshold flag: a number from 0 to 1.
// The error names the flag and its environment twin.
func (f *Flags) Threshold(name string) (float64, error) {
	v, err := strconv.ParseFloat(f.Value(name), 64)
	if err != nil || v < 0 || v > 1 {
		return 0, fmt.Errorf("--%s (%s) must be a number from 0 to 1, got %q", name, f.twins[name], f.Value(name))
	}
	return v, nil
}

// Int is the value of a whole-number flag of at least min; the error
// names the flag and its environment twin.
func (f *Flags) Int(name string, min int) (int, error) {
	v, err := strconv.Atoi(f.Value(name))
	if err != nil || v < min {
		return 0, fmt.Errorf("--%s (%s) must be a whole number of at least %d, got %q", name, f.twins[name], min, f.Value(name))
	}
	return v, nil
}

// Duration is the value of a positive duration flag, such as 30s or 5m.
func (f *Flags) Duration(name string) (time.Duration, error) {
	v, err := time.ParseDuration(f.Value(name))
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("--%s (%s) must be a positive duration such as 30s or 5m, got %q", name, f.twins[name], f.Value(name))
	}
	return v, nil
}

// List is a comma-separated flag's items, blanks dropped.
func (f *Flags) List(name string) []string {
	var out []string
	for _, item := range strings.Split(f.Value(name), ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Value is the value of a declared flag after parsing.
func (f *Flags) Value(name string) string { return f.fs.Lookup(name).Value.String() }

// Args are the arguments after the flags.
func (f *Flags) Args() []string { return f.fs.Args() }

func (f *Flags) usage(c command) {
	w := f.fs.Output()
	fmt.Fprintf(w, "Usage: 3gs %s %s\n\n%s.\n", c.name, strings.TrimSpace("[flags] "+c.args), capitalize(c.summary))
	first := true
	f.fs.VisitAll(func(fl *flag.Flag) {
		if first {
			fmt.Fprint(w, "\nFlags:\n")
			first = false
		}
		def := f.defs[fl.Name]
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(w, "  --%s (env %s; default %s)\n        %s\n", fl.Name, f.twins[fl.Name], def, fl.Usage)
	})
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// runVerb runs `3gs GROUP VERB [flags]`: the verb the first argument names,
// with flags of its own.
func runVerb(ctx context.Context, env *Env, f *Flags, group string) int {
	args := f.Args()
	if len(args) == 0 {
		verbUsage(env.Stderr, group, verbGroups()[group])
		return ExitUsage
	}
	c, ok := lookupVerb(group, args[0])
	if !ok {
		fmt.Fprintf(env.Stderr, "3gs %s: unknown verb %q\n\n", group, args[0])
		verbUsage(env.Stderr, group, verbGroups()[group])
		return ExitUsage
	}
	sub := newFlags(c, env)
	if code, ok := sub.parse(c, args[1:]); !ok {
		return code
	}
	return c.run(ctx, env, sub)
}

func verbUsage(w io.Writer, group string, verbs []command) {
	fmt.Fprintf(w, "Usage: 3gs %s VERB [flags]\n\nVerbs:\n", group)
	for _, c := range verbs {
		fmt.Fprintf(w, "  %-7s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun '3gs help %s VERB' for a verb's flags and their environment variables.\n", group)
}
