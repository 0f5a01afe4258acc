package tools

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
)

// matchOnly hides every method of a matcher but Match: the tools then
// take the plain path, one Match call per list (matchFor).
type matchOnly struct{ m matcher.Matcher }

func (o matchOnly) Match(q string, limit int) ([]matcher.Scored, error) { return o.m.Match(q, limit) }

// rendered is a get_sources answer as the transport sends it: the text,
// then the structured output, and whether it is an error result.
func rendered(t *testing.T, h *Handlers, q string, catalogued bool) []byte {
	if catalogued {
		h.Catalog(1 << 20)
	}
	out, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: &q})
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
	type asked struct {
		name string
		reg  []byte
		qs   []string
	}
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
	for _, a := range all {
		reg, err := registry.Load(a.reg)
		if err != nil {
			t.Fatal(err)
		}
		m := matcher.New(reg)
		if _, ok := matcher.Matcher(m).(matcher.MoreMatcher); !ok {
			t.Fatal("the server's matcher is no MoreMatcher: the device is gone")
		}
		qs := append(a.qs, "", "the", "zzqx vorpal blorf", "learn rust ownership")
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
