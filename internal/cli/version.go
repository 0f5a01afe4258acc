package cli

import (
	"context"
	"fmt"
	"regexp"
	"runtime/debug"
)

// runVersion prints the module version, VCS revision and Go version from the
// build information, so it is right for `go install` and `go build` alike.
func runVersion(_ context.Context, env *Env, _ *Flags) int {
	version, commit, goVersion := buildInfo()
	fmt.Fprintf(env.Stdout, "3gs %s (commit %s, %s)\n", version, commit, goVersion)
	return ExitOK
}

// buildVersion is the version reported in serverInfo.
func buildVersion() string {
	v, _, _ := buildInfo()
	return v
}

// The release build (release/, and the Dockerfile) sets these with
// -ldflags "-X github.com/three-good-sources/3gs/internal/cli.stampVersion=...".
// It builds with -buildvcs=false, so the binary's bytes depend on the
// sources and the stamp alone, not on the state of .git (or on there being
// a .git at all, as in a Docker build context); what the go command would
// have recorded is stamped explicitly instead. Empty in every other build,
// which then reports what the go command recorded.
var (
	stampVersion  string // v1.2.0, or v0.0.0-snapshot+0123456789ab for a snapshot
	stampCommit   string // the full commit hash
	stampModified string // "true" when the tree had uncommitted changes
)

func buildInfo() (version, commit, goVersion string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		version, commit, goVersion = "(devel)", "unknown", "unknown"
	} else {
		version, commit, goVersion = versionOf(bi)
	}
	return stamped(version, commit, goVersion)
}

// stamped lets the release build's stamp win over the build information.
func stamped(version, commit, goVersion string) (string, string, string) {
	if stampVersion != "" {
		version = stampVersion
	}
	if stampCommit != "" {
		commit = stampCommit
		if stampModified == "true" {
			commit += ", with uncommitted changes"
		}
	}
	return version, commit, goVersion
}

// pseudoRev is the commit a pseudo-version names, such as the
// v0.0.0-20261121120000-0123456789ab that `go install MODULE@latest` of an
// untagged commit records.
var pseudoRev = regexp.MustCompile(`-(?:[0-9]+\.)?[0-9]{14}-([0-9a-f]{12})(?:\+incompatible)?$`)

// versionOf reads what the go command recorded: the module version (a tag
// or pseudo-version with go install, "(devel)" in a checkout) and the
// commit, from the VCS stamp of a checkout build or else from the
// pseudo-version. A checkout with uncommitted changes is marked dirty.
func versionOf(bi *debug.BuildInfo) (version, commit, goVersion string) {
	version, commit, goVersion = "(devel)", "unknown", bi.GoVersion
	if bi.Main.Version != "" {
		version = bi.Main.Version
	}
	if m := pseudoRev.FindStringSubmatch(version); m != nil {
		commit = m[1]
	}
	dirty := false
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			commit = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = true
		}
	}
	if dirty {
		commit += ", with uncommitted changes"
	}
	return version, commit, goVersion
}
