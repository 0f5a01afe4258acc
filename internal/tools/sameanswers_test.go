package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/tooltable"
)

// matchOnly hides every method of a matcher but Match: the tools then
// take the plain path, one Match call per list (matchFor).
type matchOnly struct{ m matcher.Matcher }

func (o matchOnly) Match(q string, limit int) ([]matcher.Scored, error) { return o.m.Match(q, limit) }

// rendered is a get_sources answer as the transport sends it: the text,
// then the structured output, and whether it is an error result.
func rendered(t *testing.T, h *Handlers, q string, catalogued bool) []byte {
	ctx := context.Background()
	if catalogued {
		v, _, _ := h.Catalog(1 << 20)
		ctx = tooltable.WithCatalog(ctx, v)
	}
	out, err := h.GetSources(ctx, &gen.GetSourcesInput{Query: &q})
	var b []byte
	var te *gen.ToolError
	switch {
	case err == nil:
		b = h.AppendGetSourcesText(append(b, "answer\n"...), out)
	case errors.As(err, &te):
		b = append(append(b, "error\n"...), te.Text...)
		out, _ = te.Structured.(*gen.GetSourcesOutput)
	default:
		t.Fatalf("%q: %v", q, err)
	}
	if out != nil {
		var jerr error
		if b, jerr = out.AppendJSON(append(b, '\n')); jerr != nil {
			t.Fatal(jerr)
		}
	}
	return b
}

// TestGetSourcesSameAnswers: the devices that make get_sources cheaper
// (matchFor's one analysis of the query for both of a not-confident
// answer's lists, matcher.MoreMatcher) change no byte of any answer, text
// or structured, with or without the catalog in the instructions: every
// question of the evaluation sets, the benchmark mix and the two blended
// registries of about 120 categories, answered by the server's matcher
// and by the same matcher behind the plain interface.
func TestGetSourcesSameAnswers(t *testing.T) {
	all := answerSets(t)
	for _, a := range all {
		reg, err := registry.Load(a.reg)
		if err != nil {
			t.Fatal(err)
		}
		m := matcher.New(reg)
		if _, ok := matcher.Matcher(m).(matcher.MoreMatcher); !ok {
			t.Fatal("the server's matcher is no MoreMatcher: the device is gone")
		}
		qs := a.qs
		unsure := 0
		for _, catalogued := range []bool{false, true} {
			fast := New(Config{Registry: reg, Matcher: m, Threshold: DefaultThreshold})
			plain := New(Config{Registry: reg, Matcher: matchOnly{m}, Threshold: DefaultThreshold})
			for _, q := range qs {
				got, want := rendered(t, fast, q, catalogued), rendered(t, plain, q, catalogued)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: %q (catalogued %v): answers differ:\n%s\nplain:\n%s", a.name, q, catalogued, got, want)
				}
				if bytes.HasPrefix(got, []byte("error")) {
					unsure++
				}
			}
		}
		t.Logf("%s: %d questions, %d answers not confident", a.name, len(qs), unsure/2)
	}
}

var updateAnswers = flag.Bool("update-answers", false, "rewrite testdata/answers.sha256 from the answers given now")

// TestGetSourcesAnswersDigest holds every get_sources answer of the
// evaluation sets, the benchmark mix, the two blended registries and the
// 1,000-category one, text and structured output, catalogued or not, to the digests in
// testdata/answers.sha256: a change made for speed (how a listing is
// built) must not move a byte of what it says. A deliberate change of
// the answers (the matcher's ranking, the wording) rewrites the file with
// -update-answers, and says why in its commit, as the matcher's golden
// output does.
func TestGetSourcesAnswersDigest(t *testing.T) {
	if testing.Short() {
		t.Skip("answers some 5,000 questions on ten registries")
	}
	var got strings.Builder
	for _, a := range answerSets(t) {
		reg, err := registry.Load(a.reg)
		if err != nil {
			t.Fatal(err)
		}
		m := matcher.New(reg)
		for _, catalogued := range []bool{false, true} {
			h := New(Config{Registry: reg, Matcher: m, Threshold: DefaultThreshold})
			sum := sha256.New()
			for _, q := range a.qs {
				sum.Write(rendered(t, h, q, catalogued))
				sum.Write([]byte{0})
			}
			fmt.Fprintf(&got, "%x  %s catalogued=%v\n", sum.Sum(nil), a.name, catalogued)
		}
	}
	checkDigests(t, "testdata/answers.sha256", got.String(), "get_sources answers")
}

// checkDigests compares got with the digest file at path, or rewrites the
// file with -update-answers; what names what the digests cover.
func checkDigests(t *testing.T, path, got, what string) {
	t.Helper()
	if *updateAnswers {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s changed (go test ./internal/tools -run %s -update-answers, if that is meant):\ngot\n%swant\n%s", what, t.Name(), got, want)
	}
}

// asked is a registry document and the questions asked of it.
type asked struct {
	name string
	reg  []byte
	qs   []string
}

// answerSets are the evaluation sets, the benchmark mix and (unless
// -short) the two blended registries of about 120 categories and the
// 1,000-category one of TestFirstAnswerLarge, each with
// its questions and a few that are empty, stop words, nonsense or off
// the topic.
func answerSets(t *testing.T) []asked {
	var all []asked
	for _, s := range append(evalset.Sets("../.."), evalset.MixV1("../..")) {
		data, err := os.ReadFile(s.Registry)
		if err != nil {
			t.Fatal(err)
		}
		qs, err := s.Questions()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, asked{s.Name, data, qs})
	}
	if !testing.Short() {
		for _, b := range evalset.Blends() {
			large, err := b.Build("../..")
			if err != nil {
				t.Fatal(err)
			}
			var qs []string
			for _, c := range large.Cases {
				qs = append(qs, c.Query)
			}
			all = append(all, asked{b.Name, large.Registry, qs})
		}
	}
	if !testing.Short() {
		// The 1,000-category registry of TestFirstAnswerLarge: listings
		// that cannot be whole, faint signs and all.
		big, err := evalset.Big("../..", evalset.Sets("../.."), 1000, 1)
		if err != nil {
			t.Fatal(err)
		}
		var qs []string
		for _, c := range big.Cases {
			qs = append(qs, c.Query)
		}
		all = append(all, asked{"big-1000", big.Registry, qs})
	}
	for i := range all {
		all[i].qs = append(all[i].qs, "", "the", "zzqx vorpal blorf", "learn rust ownership")
	}
	return all
}
