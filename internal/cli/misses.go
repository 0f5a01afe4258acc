package cli

import (
	"context"
	"fmt"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/querylog"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/tools"
)

// missesOptions are misses' flags.
type missesOptions struct {
	registryFile
	top                             intFlag
	threshold, lowConfidence, floor thresholdFlag
}

func missesFlags(f *Flags) {
	o := options[missesOptions](f)
	o.registryFile.flags(f, "rescore the logged queries against this registry file, so that those it now answers drop off the list; none: take the log's own outcomes")
	f.ThresholdVar(&o.threshold, "threshold", "MATCH_THRESHOLD", tools.DefaultThreshold, "with --registry: the score a rescored query needs to count as answered")
	f.ThresholdVar(&o.lowConfidence, "low-confidence", "THREEGS_LOW_CONFIDENCE", 0.6, "answered queries that scored below this are listed too, as answers the curator may want to make surer")
	f.IntVar(&o.top, "top", "THREEGS_MISSES_TOP", "10", 1, "how many queries to show per category")
	f.ThresholdVar(&o.floor, "home-floor", "THREEGS_MISSES_HOME_FLOOR", 0.15, "a query is listed under its closest category only when that scored at least this; below, it has no good home there and is listed as a candidate for a new category")
}

// runMisses turns a query log into the curator's to-do list: the queries
// that got no confident answer, grouped by the category they came closest
// to, the most frequent first.
func runMisses(_ context.Context, env *Env, f *Flags) int {
	if len(f.Args()) != 1 {
		fmt.Fprintln(env.Stderr, "3gs misses: give the query log's path, the file serve wrote with --query-log, e.g. 3gs misses queries.jsonl")
		return ExitUsage
	}
	path := f.Args()[0]
	o := options[missesOptions](f)
	low, err := o.lowConfidence.get()
	threshold, floor := 0.0, 0.0
	if err == nil {
		threshold, err = o.threshold.get()
	}
	if err == nil {
		floor, err = o.floor.get()
	}
	top, limit := 0, int64(0)
	if err == nil {
		top, err = o.top.get()
	}
	if err == nil {
		limit, err = registryLimit(o.maxRegistry)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs misses: %v\n", err)
		return ExitUsage
	}
	entries, code, done := readQueryLog(env, path)
	if done {
		return code
	}
	var closest querylog.Closest
	var reg *registry.Registry
	if p := o.registry; p != "" {
		var ok bool
		if reg, _, ok = loadRegistry(env, "misses", p, limit); !ok {
			return ExitFail
		}
		if line := pendingProposals(p); line != "" {
			defer fmt.Fprintf(env.Stdout, "\nAlso: %s.\n", line)
		}
		m := matcher.New(reg)
		closest = func(q string) (string, float64, bool) {
			top, err := m.Match(q, 1)
			if err != nil || len(top) == 0 {
				return "", 0, false
			}
			if !top[0].Grounded {
				// Not a home whatever its score: the query shares no
				// word with it (get_sources offers it as no candidate).
				return "", top[0].Score, false
			}
			return top[0].Slug, top[0].Score, top[0].Score >= threshold
		}
	}
	groups := querylog.Misses(entries, low, floor, closest)
	total := 0
	for _, g := range groups {
		total += g.Total
	}
	if total == 0 {
		fmt.Fprintf(env.Stdout, "No misses in %d logged calls: every query was answered with a score of at least %s.\n", len(entries), fmtFloat(low))
		return ExitOK
	}
	fmt.Fprintf(env.Stdout, "%d of %d logged calls got no confident answer (or one below %s), in %d %s, most asked first.\n",
		total, len(entries), fmtFloat(low), len(groups), plural(len(groups), "group", "groups"))
	printMissGroups(env, groups, reg, floor, top)
	return ExitOK
}

// readQueryLog reads the query log for misses; done says misses has
// nothing more to do and should exit with code: the file cannot be read,
// is no query log, or holds no calls yet. Lines that are not entries are
// reported, the first few by name.
func readQueryLog(env *Env, path string) (entries []gen.QueryLog, code int, done bool) {
	entries, problems, err := querylog.Read(path)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs misses: %v\nGive the file serve writes with --query-log (THREEGS_QUERY_LOG).\n", err)
		return nil, ExitFail, true
	}
	if len(entries) == 0 && len(problems) > 0 {
		fmt.Fprintf(env.Stderr, "3gs misses: %s is not a query log: none of its %d %s is a query log entry (the first: %s).\nGive the file serve writes with --query-log (THREEGS_QUERY_LOG).\n",
			path, len(problems), plural(len(problems), "line", "lines"), problems[0])
		return nil, ExitFail, true
	}
	if len(entries) == 0 {
		fmt.Fprintf(env.Stdout, "No calls logged in %s yet: serve appends one line per get_sources call while it runs with --query-log %s.\n", path, path)
		return nil, ExitOK, true
	}
	for _, p := range problems[:min(len(problems), 5)] {
		fmt.Fprintf(env.Stderr, "3gs misses: skipped %s\n", p)
	}
	if len(problems) > 5 {
		fmt.Fprintf(env.Stderr, "3gs misses: skipped %d more lines that are not query log entries\n", len(problems)-5)
	}
	return entries, ExitOK, false
}

// printMissGroups lists each group of misses under its category (with
// the category's name when the registry is at hand), the top queries of
// each, and what the curator can do about them.
func printMissGroups(env *Env, groups []querylog.Group, reg *registry.Registry, floor float64, top int) {
	for _, g := range groups {
		name := fmt.Sprintf("no good home (no category shares its words, or none scored %s or more)", fmtFloat(floor))
		if g.Slug != "" {
			name = g.Slug
			if reg != nil {
				if c, ok := reg.Category(g.Slug); ok {
					name += " (" + c.Name + ")"
				}
			}
		}
		fmt.Fprintf(env.Stdout, "\n%s: %d %s\n", name, g.Total, plural(g.Total, "query", "queries"))
		for _, m := range g.Misses[:min(len(g.Misses), top)] {
			fmt.Fprintf(env.Stdout, "  %3d×  %q  (best score %.2f)\n", m.Count, m.Query, m.Score)
		}
		if len(g.Misses) > top {
			fmt.Fprintf(env.Stdout, "  ... and %d more (raise --top)\n", len(g.Misses)-top)
		}
		if g.Slug != "" {
			fmt.Fprintf(env.Stdout, "  To do: if these belong in %s, add a query pattern in their words; if not, they may need a new category.\n", g.Slug)
		} else {
			fmt.Fprintln(env.Stdout, "  To do: consider a new category, if enough agents ask for it.")
		}
	}
}
