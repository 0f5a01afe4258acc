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
	"slices"
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

// A Blend is a registry of about 120 categories made of several sets'
// registries (Big with no distractors), asked only the questions of some
// of them: the size of the registry the agent trial of issue 48 used
// (121 categories), where a not-confident answer describes five
// candidates and lists the rest by slug.
type Blend struct {
	Name string
	// Of are the sets whose categories make the registry.
	Of []string
	// Asked are the sets whose questions are asked of it; the others'
	// categories are there as neighbours.
	Asked []string
	// Tuned is true when every asked set is a development set.
	Tuned bool
	// Own, when set, is a queries.tsv written for the blended registry
	// itself (slugs as Big names them), asked too as the set Name.
	Own string
}

// Blends are the two registries of about 120 categories: one asked the
// development sets' questions (the held-out set's categories among them
// as neighbours, its questions never asked), one asked the held-out and
// probe sets' questions and its own (testdata/blend-heldout, written
// for it), with dev2's categories as neighbours.
func Blends() []Blend {
	return []Blend{
		{Name: "blend-dev", Of: []string{"dev", "dev2", "dev3", "heldout"}, Asked: []string{"dev", "dev2", "dev3"}, Tuned: true},
		{Name: "blend-heldout", Of: []string{"heldout", "heldout2", "probe", "dev2"}, Asked: []string{"heldout", "heldout2", "probe"}, Own: "blend-heldout"},
	}
}

// Build makes b's registry and questions from the sets under root (see
// Big: a slug two sets share is renamed SET-SLUG, shapes are SET/SHAPE).
func (b Blend) Build(root string) (*Large, error) {
	byName := map[string]Set{}
	for _, s := range Sets(root) {
		byName[s.Name] = s
	}
	var of []Set
	for _, n := range b.Of {
		s, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("blend %s: no set %q", b.Name, n)
		}
		of = append(of, s)
	}
	l, err := Big(root, of, 0, 1)
	if err != nil {
		return nil, err
	}
	asked := l.Cases[:0]
	for _, c := range l.Cases {
		if slices.Contains(b.Asked, c.Set) {
			asked = append(asked, c)
		}
	}
	l.Cases = asked
	if b.Own != "" {
		own, err := Read(filepath.Join(root, "internal", "matcher", "testdata", b.Own, "queries.tsv"))
		if err != nil {
			return nil, err
		}
		for _, c := range own {
			c.Shape = b.Name + "/" + c.Shape
			c.Set = b.Name
			l.Cases = append(l.Cases, c)
		}
	}
	return l, nil
}
