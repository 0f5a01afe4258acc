package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/matcher/typo"
)

// envPrefix starts the name of every environment variable 3gs reads of
// its own: a set variable with this prefix that no command reads is a
// misspelling, which would otherwise be ignored without a word.
const envPrefix = "THREEGS_"

// otherEnv are the THREEGS_ variables read other than as a flag's twin:
// the stdio session's token, and those of the project's own tests and
// tools, which a developer's shell may hold.
var otherEnv = []string{app.StdioTokenEnv, "THREEGS_LOOPBACK_ONLY", "THREEGS_E2E_INSTALL", "THREEGS_E2E_TOOLS", "THREEGS_E2E_ARTIFACTS", "THREEGS_LEXGEN_REQUIRE"}

// knownEnv is every THREEGS_ variable some command reads: the flags'
// twins, of every command and verb, and otherEnv.
func knownEnv() []string {
	seen := map[string]bool{}
	for _, v := range otherEnv {
		seen[v] = true
	}
	blank := &Env{Getenv: func(string) string { return "" }}
	add := func(c command) {
		for _, twin := range newFlags(c, blank).twins {
			if strings.HasPrefix(twin, envPrefix) {
				seen[twin] = true
			}
		}
	}
	for _, c := range commands() {
		add(c)
		for _, v := range verbGroups()[c.name] {
			add(v)
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// unknownVar is a THREEGS_ variable set that no command reads, with the
// known one nearest to it.
type unknownVar struct {
	name, closest string
}

// String says what is wrong with v and what it may have meant.
func (v unknownVar) String() string {
	return fmt.Sprintf("%s is set, but no 3gs command reads it: did you mean %s?", v.name, v.closest)
}

// unknownEnv is each THREEGS_ variable set in env that no command reads,
// in name order, each with the known variable nearest to it by edit
// distance (typo.Distance); nil when env cannot list its variables.
func unknownEnv(env *Env) []unknownVar {
	if env.Environ == nil {
		return nil
	}
	known := knownEnv()
	var out []unknownVar
	for _, kv := range env.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) {
			continue
		}
		if _, found := slices.BinarySearch(known, name); found {
			continue
		}
		best, bestD := "", -1
		for _, k := range known {
			if d := typo.Distance(name, k); bestD < 0 || d < bestD {
				best, bestD = k, d
			}
		}
		out = append(out, unknownVar{name: name, closest: best})
	}
	slices.SortFunc(out, func(a, b unknownVar) int { return strings.Compare(a.name, b.name) })
	return slices.CompactFunc(out, func(a, b unknownVar) bool { return a.name == b.name })
}
