package matcher

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
)

// The golden answers pin what the matcher returns for every query of
// every evaluation set, and for generated registries of 1,000 and 5,000
// categories (the second past semAllCats, so without word vectors): the
// slugs and scores of Match at limits 5 and 100, and a digest of Explain's
// five explanations (every field, floats in full). A change meant to make
// matching cheaper must leave every line as it is; one meant to change
// results rewrites them with
//
//	go test ./internal/matcher -run TestGolden -golden.update
//
// and the diff of testdata/golden shows what moved.
var goldenUpdate = flag.Bool("golden.update", false, "rewrite testdata/golden from the matcher's current answers")

// goldenSet is a registry and the queries asked of it.
type goldenSet struct {
	name    string
	index   func(t testing.TB) *Index
	queries func(t testing.TB) []string
}

func goldenSets() []goldenSet {
	own := func(t testing.TB) *Index {
		reg, err := registry.Load(threegs.DefaultRegistry)
		if err != nil {
			t.Fatal(err)
		}
		return New(reg)
	}
	file := func(path string) func(t testing.TB) *Index {
		return func(t testing.TB) *Index {
			reg, err := registry.LoadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			return New(reg)
		}
	}
	shaped := func(path string) func(t testing.TB) []string {
		return func(t testing.TB) []string {
			var qs []string
			for _, c := range readShaped(t, path) {
				qs = append(qs, c.query)
			}
			return qs
		}
	}
	sets := []goldenSet{
		{"eval", own, func(t testing.TB) []string {
			var qs []string
			for _, c := range readEval(t, "testdata/eval.tsv") {
				qs = append(qs, c.query)
			}
			return qs
		}},
		{"probe", own, shaped("testdata/probe/queries.tsv")},
	}
	for _, d := range []string{"dev", "dev2", "dev3", "heldout", "heldout2"} {
		dir := filepath.Join("testdata", d)
		sets = append(sets, goldenSet{d, file(filepath.Join(dir, "registry.json")), shaped(filepath.Join(dir, "queries.tsv"))})
	}
	for _, n := range []int{1_000, 5_000} {
		var doc *gen.Registry
		generated := func() *gen.Registry {
			if doc == nil {
				doc = registrytest.Generate(n, 11)
			}
			return doc
		}
		sets = append(sets, goldenSet{
			name: fmt.Sprintf("registrytest-%d", n),
			index: func(t testing.TB) *Index {
				reg, err := registry.Load(gen.EncodeRegistry(generated()))
				if err != nil {
					t.Fatal(err)
				}
				return New(reg)
			},
			queries: func(t testing.TB) []string { return registrytest.Queries(generated(), 300, 5) },
		})
	}
	sets = append(sets, goldenSet{
		name: "synth-1000",
		index: func(t testing.TB) *Index {
			s := newSynth(3, 21_000)
			return Build(s.categories(1_000))
		},
		queries: func(t testing.TB) []string {
			s := newSynth(3, 21_000)
			return s.queries(s.categories(1_000), 300)
		},
	})
	return sets
}

// goldenAnswer is what the golden files hold for one query: a line with
// the query, one per limit, and the digest of Explain.
func goldenAnswer(x *Index, q string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Q %s\n", q)
	for _, limit := range []int{5, 100} {
		fmt.Fprintf(&b, "%d", limit)
		got, err := x.Match(q, limit)
		if err != nil {
			fmt.Fprintf(&b, " error: %v", err)
		}
		for _, s := range got {
			fmt.Fprintf(&b, " %s:%s", s.Slug, strconv.FormatFloat(s.Score, 'f', 6, 64))
		}
		b.WriteByte('\n')
	}
	ex, err := x.Explain(q, 5)
	sum := sha256.Sum256(fmt.Appendf(nil, "%+v %v", ex, err))
	fmt.Fprintf(&b, "E %s\n", hex.EncodeToString(sum[:8]))
	return b.String()
}

func TestGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("the golden answers take a few seconds")
	}
	for _, set := range goldenSets() {
		t.Run(set.name, func(t *testing.T) {
			x := set.index(t)
			queries := set.queries(t)
			path := filepath.Join("testdata", "golden", set.name+".txt")
			var out bytes.Buffer
			for _, q := range queries {
				out.WriteString(goldenAnswer(x, q))
			}
			if *goldenUpdate {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (write it with -golden.update)", err)
			}
			if bytes.Equal(want, out.Bytes()) {
				return
			}
			// Report the queries whose answers moved, each once.
			wantBy := goldenByQuery(want)
			gotBy := goldenByQuery(out.Bytes())
			bad := 0
			for _, q := range queries {
				if wantBy[q] != gotBy[q] {
					bad++
					if bad <= 10 {
						t.Errorf("answer moved for %q\nwant:\n%sgot:\n%s", q, wantBy[q], gotBy[q])
						if ex, err := x.Explain(q, 5); err == nil && len(ex) > 0 {
							t.Logf("explain now: %+v", ex[0])
						}
					}
				}
			}
			if bad == 0 {
				t.Errorf("%s differs from the answers (query order or count changed)", path)
			} else {
				t.Errorf("%d of %d answers moved", bad, len(queries))
			}
		})
	}
}

// goldenByQuery splits a golden file into each query's block.
func goldenByQuery(data []byte) map[string]string {
	out := map[string]string{}
	var q string
	var block strings.Builder
	flush := func() {
		if q != "" {
			out[q] = block.String()
		}
		block.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "Q "); ok {
			flush()
			q = rest
		}
		block.WriteString(line)
		block.WriteByte('\n')
	}
	flush()
	return out
}
