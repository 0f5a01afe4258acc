// Package evalset reads the matcher's shaped evaluation sets (a registry
// and its queries.tsv under internal/matcher/testdata) and builds from them
// a large registry with generated distractors. It is test support, shared
// by the matcher's tests (how the ranking and the confidence do) and the
// tools' tests (what the agent sees in its first answer), and imports
// neither.
package evalset

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Case is one line of a queries.tsv: SHAPE<TAB>SLUG-or-NONE<TAB>QUERY.
type Case struct {
	Line  int
	Shape string
	Want  string // a slug, or None
	Query string
	Set   string // the set's name, in a registry built from several (Big)
}

// None is the Want of a question no category answers.
const None = "NONE"

// OnTopic reports whether some category is the right answer.
func (c Case) OnTopic() bool { return c.Want != None }

// Read parses a queries.tsv. Blank lines and lines starting with # are
// skipped.
func Read(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Case
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || f[0] == "" || f[1] == "" || strings.TrimSpace(f[2]) == "" {
			return nil, fmt.Errorf("%s:%d: want SHAPE<TAB>SLUG<TAB>QUERY, got %q", path, n, line)
		}
		out = append(out, Case{Line: n, Shape: f[0], Want: f[1], Query: f[2]})
	}
	return out, sc.Err()
}

// Set is one registry with its questions.
type Set struct {
	Name     string
	Registry string // path of its registry.json
	Queries  string // path of its queries.tsv
	// Tuned is true for the development sets, which the matcher may be
	// tuned on; false for the held-out and probe sets, which it never is.
	Tuned bool
}

// Sets are the shaped sets, with paths under root, the module's top
// directory: the three development sets, the two held-out sets, and the
// probe set for the shipped registry.
func Sets(root string) []Set {
	td := filepath.Join(root, "internal", "matcher", "testdata")
	set := func(name string, tuned bool) Set {
		return Set{name, filepath.Join(td, name, "registry.json"), filepath.Join(td, name, "queries.tsv"), tuned}
	}
	probe := set("probe", false)
	probe.Registry = filepath.Join(root, "registry.json")
	return []Set{set("dev", true), set("dev2", true), set("dev3", true), set("heldout", false), set("heldout2", false), probe}
}

// MixV1 is the benchmark mix, version 1, with paths under root: 152
// questions over the dev registry, drawn from the dev set (typos, long
// questions, near misses, off-topic ones and a sample of the rest) plus
// nonsense, of which more than a third are no confident answer. The
// benchmarks of the request path measure on it, so a device kept for
// speed is kept for what agents ask rather than for one lucky question.
// It is frozen: a changed mix is a new version beside it.
func MixV1(root string) Set {
	td := filepath.Join(root, "internal", "matcher", "testdata")
	return Set{"mix-v1", filepath.Join(td, "dev", "registry.json"), filepath.Join(td, "mix-v1", "queries.tsv"), true}
}

// Questions reads the questions of s alone, in order.
func (s Set) Questions() ([]string, error) {
	cases, err := Read(s.Queries)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(cases))
	for i, c := range cases {
		out[i] = c.Query
	}
	return out, nil
}
