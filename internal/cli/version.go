package cli

import (
	"context"
	"fmt"
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

func buildInfo() (version, commit, goVersion string) {
	version, commit, goVersion = "(devel)", "unknown", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				commit = s.Value
			}
		}
	}
	return version, commit, goVersion
}
