package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/tools"
)

// explainTop is how many categories --explain breaks down.
const explainTop = 5

// queryOptions are query's flags.
type queryOptions struct {
	registryFile
	matcher   string
	threshold thresholdFlag
	explain   bool
}

func queryFlags(f *Flags) {
	o := options[queryOptions](f)
	o.registryFile.flags(f, "registry file to match against; none means the embedded registry.json")
	f.ThresholdVar(&o.threshold, "threshold", "MATCH_THRESHOLD", tools.DefaultThreshold, "lowest score (0 to 1) that counts as a match")
	f.StringVar(&o.matcher, "matcher", "THREEGS_MATCHER", "index", "matching algorithm: index, or baseline (the old whole-string matcher, for comparison)")
	f.BoolVar(&o.explain, "explain", "THREEGS_EXPLAIN", "break down the scores of the best "+strconv.Itoa(explainTop)+" categories by field and by query word (index matcher only)")
}

// runQuery matches the words after the flags as one query, the way
// get_sources would, and prints the answer: the match, the runners-up, and
// on a match the category's sources as get_sources returns them. Exit 0 on a match, 1 when
// nothing reaches the threshold, so scripts can check patterns.
func runQuery(ctx context.Context, env *Env, f *Flags) int {
	o := options[queryOptions](f)
	query := strings.Join(f.Args(), " ")
	if strings.TrimSpace(query) == "" {
		fmt.Fprintln(env.Stderr, "3gs query: give the query text, e.g. 3gs query --explain how do I harden a linux server")
		return ExitUsage
	}
	threshold, err := o.threshold.get()
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs query: %v\n", err)
		return ExitUsage
	}
	newMatcher, err := matcherNamed(o.matcher)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs query: %v\n", err)
		return ExitUsage
	}
	explain := o.explain
	if explain && o.matcher != "index" {
		fmt.Fprintln(env.Stderr, "3gs query: --explain needs --matcher=index; the baseline matcher has no per-field scores")
		return ExitUsage
	}
	limit, ok := o.sizeLimit(f)
	if !ok {
		return ExitUsage
	}
	reg, _, ok := loadRegistry(env, "query", o.registry, limit)
	if !ok {
		return ExitFail
	}
	m := newMatcher(reg)
	ranked, err := m.Match(query, max(explainTop, 3))
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs query: %v; name the topic itself, e.g. \"password manager\"\n", err)
		return ExitFail
	}
	code := printMatch(env.Stdout, reg, query, ranked, threshold)
	if code == ExitOK {
		// The sources as an agent gets them: get_sources itself, and the
		// text block it answers with.
		h := tools.New(tools.Config{Registry: reg, Matcher: m, Threshold: threshold})
		out, err := h.GetSources(ctx, &gen.GetSourcesInput{Query: &query})
		if err != nil {
			fmt.Fprintf(env.Stderr, "3gs query: %v\n", err)
			return ExitFail
		}
		fmt.Fprintf(env.Stdout, "\n%s\n", h.GetSourcesText(out))
	}
	if explain {
		ex, err := m.(*matcher.Index).Explain(query, explainTop)
		if err != nil {
			fmt.Fprintf(env.Stderr, "3gs query: %v\n", err)
			return ExitFail
		}
		fmt.Fprintf(env.Stdout, "\nScore breakdown of the best %d categories:\n", len(ex))
		printExplanations(env.Stdout, ex)
	}
	return code
}

func printMatch(w io.Writer, reg *registry.Registry, query string, ranked []matcher.Scored, threshold float64) int {
	fmt.Fprintf(w, "Query: %s\n", query)
	code := ExitOK
	rest := ranked
	if len(ranked) > 0 && ranked[0].Score >= threshold {
		c, _ := reg.Category(ranked[0].Slug)
		fmt.Fprintf(w, "Match: %s (%s), score %.3f, threshold %s\n", c.Slug, c.Name, ranked[0].Score, fmtFloat(threshold))
		rest = ranked[1:]
	} else {
		fmt.Fprintf(w, "No match: no category reaches the threshold %s\n", fmtFloat(threshold))
		code = ExitFail
	}
	// Only categories the matcher has evidence for are named as close;
	// the others are scored too, but a score without a shared word is
	// no sign of a topic.
	var others []string
	for _, s := range rest {
		if s.Grounded && len(others) < 3 {
			others = append(others, fmt.Sprintf("%s %.3f", s.Slug, s.Score))
		}
	}
	switch {
	case len(others) > 0:
		fmt.Fprintf(w, "Next: %s\n", strings.Join(others, ", "))
	case code != ExitOK:
		fmt.Fprintln(w, "No candidates: no category shares a word of the query, or one related to it, in what its curator wrote about it")
	}
	return code
}

func printExplanations(w io.Writer, ex []matcher.Explanation) {
	for i, e := range ex {
		fmt.Fprintf(w, "\n%d. %s  score %.3f\n", i+1, e.Slug, e.Score)
		fmt.Fprintf(w, "   coverage %.3f, phrase %.3f, adjacency %.3f, word vectors %.3f; evidence %.3f\n", e.Coverage, e.Phrase, e.Adjacency, e.Semantic, e.Evidence)
		if e.BestPhrase != "" {
			fmt.Fprintf(w, "   best phrase  %s\n", e.BestPhrase)
		}
		if e.Doubt != "" {
			fmt.Fprintf(w, "   in doubt: %s (evidence scaled down)\n", e.Doubt)
		}
		if !e.Grounded {
			fmt.Fprintln(w, "   no evidence: no query word meets what its curator wrote, so it is never offered as a candidate")
		}
		switch {
		case e.Capped:
			fmt.Fprintf(w, "   confidence %.3f: capped below the threshold by the doubt, whatever these effects add up to:\n", e.Score)
		case len(e.Calibration) > 0:
			fmt.Fprintf(w, "   confidence %.3f = 1/(1+e^-z), z the sum of these effects:\n", e.Score)
		}
		if len(e.Calibration) > 0 {
			for _, f := range e.Calibration {
				fmt.Fprintf(w, "     %+7.3f  %s (%.3f)\n", f.Effect, f.Factor, f.Value)
			}
		}
		var fields []string
		for f := range matcher.NumFields {
			if v := e.Fields[f]; v > 0 {
				fields = append(fields, fmt.Sprintf("%s %.3f", matcher.Field(f), v))
			}
		}
		if len(fields) == 0 {
			fields = []string{"none"}
		}
		fmt.Fprintf(w, "   coverage by field: %s\n", strings.Join(fields, ", "))
		for _, we := range e.Words {
			found := "not in this category"
			if we.Term != "" {
				var in []string
				for _, f := range we.In {
					in = append(in, f.String())
				}
				found = fmt.Sprintf("→ %s (%s, quality %.2f) in %s", we.Term, we.Kind, we.Quality, strings.Join(in, ", "))
			} else if we.Kind == matcher.KindNone {
				found = "unknown to the registry"
				if we.Common {
					found = "unknown to the registry, an ordinary English word"
				}
			}
			fmt.Fprintf(w, "   %-16s weight %.3f  +%.3f  %s\n", we.Word, we.Weight, we.Contribution, found)
		}
	}
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// loadRegistry loads path, of at most limit bytes, or the embedded
// registry when path is empty, and names what it loaded. On failure it
// tells the user of command cmd what went wrong and how to see every
// problem.
func loadRegistry(env *Env, cmd, path string, limit int64) (*registry.Registry, string, bool) {
	source := "embedded registry.json"
	var r *registry.Registry
	var err error
	if path == "" {
		r, err = registry.Load(threegs.DefaultRegistry)
	} else {
		source = path
		r, err = registry.LoadFileLimit(path, limit)
	}
	if err != nil {
		problem, fix := "the embedded registry.json does not load: "+err.Error(), "this is a build problem; rebuild 3gs from a clean checkout"
		if path != "" {
			problem, fix = registryProblem(path, err, "match against the embedded registry")
		}
		fmt.Fprintf(env.Stderr, "3gs %s: %s\nFix: %s.\n", cmd, problem, fix)
		return nil, source, false
	}
	return r, source, true
}

// matcherNamed returns the constructor of the named matching algorithm,
// so a wrong name is reported before any registry is loaded.
func matcherNamed(name string) (func(*registry.Registry) matcher.Matcher, error) {
	switch name {
	case "index":
		return func(r *registry.Registry) matcher.Matcher { return matcher.New(r) }, nil
	case "baseline":
		return func(r *registry.Registry) matcher.Matcher { return matcher.NewBaseline(r) }, nil
	}
	return nil, fmt.Errorf("--matcher (THREEGS_MATCHER) must be index or baseline, got %q", name)
}
