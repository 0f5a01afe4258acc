package querylog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// maxReadBytes bounds each file Read takes in: far above any rotation bound
// an operator would pick, far below what would exhaust memory.
const maxReadBytes = 256 << 20

// Read returns the entries of the log at path, oldest first: those of the
// rotated PATH.1 (when present) and then PATH's. A line that is not a
// valid entry (a write cut short by a crash, a hand edit) is skipped and
// reported in problems as "FILE:LINE: reason".
func Read(path string) (entries []gen.QueryLog, problems []string, err error) {
	for _, p := range []string{path + ".1", path} {
		data, err := safefile.Read(p, maxReadBytes, "query log")
		if errors.Is(err, fs.ErrNotExist) && p != path {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		for n, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			e, err := gen.DecodeQueryLog(line)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: %v", p, n+1, err))
				continue
			}
			entries = append(entries, *e)
		}
	}
	return entries, problems, nil
}

// Miss is one query a curator should look at, with how often it was asked.
type Miss struct {
	Query string
	Count int
	Score float64 // its best score below the threshold, or its low score
}

// Group gathers the misses whose closest category is Slug ("" when no
// category came close).
type Group struct {
	Slug   string
	Total  int // Σ Count
	Misses []Miss
}

// Closest says, for a logged query, whether it now matches with
// confidence, and otherwise its closest category and score. 3gs misses
// passes one that rescores with the registry given; nil keeps what the log
// says.
type Closest func(query string) (slug string, score float64, confident bool)

// Misses returns the queries that got no confident answer, and those that
// were answered with a score below lowConfidence, grouped by their closest
// category: the biggest group first, and in each the most asked query
// first. A query whose closest category scored below homeFloor has no good
// home there: it goes to the group of Slug "", as if none came close.
// Queries are compared after lower-casing and folding spaces.
func Misses(entries []gen.QueryLog, lowConfidence, homeFloor float64, closest Closest) []Group {
	type key struct{ slug, query string }
	counts := map[key]*Miss{}
	groups := map[string]*Group{}
	// A log repeats its queries; each is rescored once.
	type rescored struct {
		slug      string
		score     float64
		confident bool
	}
	memo := map[string]rescored{}
	for _, e := range entries {
		if e.Query == nil {
			continue // calls by slug: the agent already knew the category
		}
		var slug string
		var score float64
		switch e.Outcome {
		case gen.QueryLogOutcomeCandidates, gen.QueryLogOutcomeNoCandidates:
			if len(e.Candidates) > 0 {
				slug, score = e.Candidates[0].Slug, e.Candidates[0].Score
			}
		case gen.QueryLogOutcomeMatched:
			if e.Score == nil || *e.Score >= lowConfidence || e.Slug == nil {
				continue
			}
			slug, score = *e.Slug, *e.Score
		default:
			continue
		}
		q := strings.Join(strings.Fields(strings.ToLower(*e.Query)), " ")
		if closest != nil {
			r, ok := memo[q]
			if !ok {
				r.slug, r.score, r.confident = closest(q)
				memo[q] = r
			}
			if slug, score = r.slug, r.score; r.confident && score >= lowConfidence {
				continue // the registry answers it now
			}
		}
		if score < homeFloor {
			slug = ""
		}
		k := key{slug, q}
		m := counts[k]
		if m == nil {
			m = &Miss{Query: q}
			counts[k] = m
		}
		m.Count++
		m.Score = max(m.Score, score)
		g := groups[slug]
		if g == nil {
			g = &Group{Slug: slug}
			groups[slug] = g
		}
		g.Total++
	}
	for k, m := range counts {
		groups[k.slug].Misses = append(groups[k.slug].Misses, *m)
	}
	out := make([]Group, 0, len(groups))
	for _, g := range groups {
		slices.SortFunc(g.Misses, func(a, b Miss) int {
			if a.Count != b.Count {
				return b.Count - a.Count
			}
			return strings.Compare(a.Query, b.Query)
		})
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b Group) int {
		switch {
		case a.Total != b.Total:
			return b.Total - a.Total
		case (a.Slug == "") != (b.Slug == ""):
			if a.Slug == "" {
				return 1 // "no close category" last among equals
			}
			return -1
		}
		return strings.Compare(a.Slug, b.Slug)
	})
	return out
}
