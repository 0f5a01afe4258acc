package cli

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/three-good-sources/3gs/internal/schema"
	"github.com/three-good-sources/3gs/internal/schemadiff"
)

var schemaSubcommands = []command{
	{"diff", "[OLD_DIR] [NEW_DIR]", "classify every change between two schema folders as breaking or compatible for clients; exit 1 on a breaking change", schemaDiffFlags, runSchemaDiff},
}

// schemaDiffOptions are schema diff's flags.
type schemaDiffOptions struct {
	base, changelog string
	requireBump     bool
}

func schemaDiffFlags(f *Flags) {
	o := options[schemaDiffOptions](f)
	f.StringVar(&o.base, "base", "THREEGS_SCHEMA_BASE", "", "compare NEW_DIR (default schema) with schema/ as it is at this git revision, e.g. main or HEAD~1, instead of OLD_DIR")
	f.StringVar(&o.changelog, "changelog", "THREEGS_CHANGELOG", "CHANGELOG.md", "with --require-bump: the changelog that must name the new contract version")
	f.BoolVar(&o.requireBump, "require-bump", "THREEGS_REQUIRE_BUMP", "accept breaking changes when the contract's major version went up and the changelog has an entry for the new version (what CI checks)")
}

func runSchemaDiff(_ context.Context, env *Env, f *Flags) int {
	o := options[schemaDiffOptions](f)
	args, base := f.Args(), o.base
	var oldDir, newDir string
	switch {
	case base != "" && len(args) <= 1:
		newDir = "schema"
		if len(args) == 1 {
			newDir = args[0]
		}
		dir, remove, err := schema.CheckoutAt(base, newDir)
		if err != nil {
			fmt.Fprintf(env.Stderr, "3gs schema diff: %v\n", err)
			return ExitFail
		}
		defer remove()
		oldDir = dir
	case base == "" && len(args) == 2:
		oldDir, newDir = args[0], args[1]
	default:
		fmt.Fprintln(env.Stderr, "3gs schema diff: give two folders (3gs schema diff OLD_DIR NEW_DIR), or a git revision to compare schema/ with (3gs schema diff --base main)")
		return ExitUsage
	}
	old, err := schema.Load(oldDir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs schema diff: the old schemas (%s): %v\n", describeOld(base, oldDir), err)
		return ExitFail
	}
	new, err := schema.Load(newDir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs schema diff: the new schemas (%s): %v\n", newDir, err)
		return ExitFail
	}
	changes := schemadiff.Compare(old, new)
	for _, c := range changes {
		fmt.Fprintln(env.Stdout, c)
	}
	breaking := schemadiff.AnyBreaking(changes)
	if old.ContractVersion != new.ContractVersion {
		fmt.Fprintf(env.Stdout, "contract version %s → %s\n", old.ContractVersion, new.ContractVersion)
	}
	switch {
	case !breaking:
		fmt.Fprintf(env.Stderr, "%d changes, none breaking\n", len(changes))
		return ExitOK
	case !o.requireBump:
		fmt.Fprintf(env.Stderr, "%d changes, some breaking\n", len(changes))
		return ExitFail
	}
	if err := checkBump(old.ContractVersion, new.ContractVersion, o.changelog); err != nil {
		fmt.Fprintf(env.Stderr, "breaking changes: %v\n", err)
		return ExitFail
	}
	fmt.Fprintf(env.Stderr, "breaking changes, released as contract version %s with a changelog entry\n", new.ContractVersion)
	return ExitOK
}

func describeOld(base, dir string) string {
	if base != "" {
		return "schema/ at " + base
	}
	return dir
}

// checkBump accepts breaking changes only under a new major version that
// the changelog describes.
func checkBump(oldVersion, newVersion, changelog string) error {
	if major(newVersion) <= major(oldVersion) {
		return fmt.Errorf("raise the major number of contractVersion in schema/%s (%s → %d.0.0) and add a \"## Contract %d.0.0\" entry to %s saying what clients must change",
			schema.ContractFile, oldVersion, major(oldVersion)+1, major(oldVersion)+1, changelog)
	}
	text, err := os.ReadFile(changelog)
	if err != nil {
		return fmt.Errorf("contract version %s needs an entry in %s: %v", newVersion, changelog, err)
	}
	entry := regexp.MustCompile(`(?m)^#+ .*\b` + regexp.QuoteMeta(newVersion) + `\b`)
	if !entry.Match(text) {
		return fmt.Errorf("%s has no heading for contract version %s: add \"## Contract %s\" saying what clients must change", changelog, newVersion, newVersion)
	}
	return nil
}

func major(v string) int {
	m, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	return m
}
