package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
)

// BenchmarkGetSourcesUnsure is one get_sources call by query, text and
// structured output rendered as the transport does, with the questions
// split by what the answer is: sure (a confident answer) or unsure (not
// confident, or no match: the listing). On the benchmark mix over its
// registry (evalset.MixV1), and on generated registries of 1,000 and
// 100,000 categories (registrytest, as bench/report's scale section
// serves them; the 100,000 one takes a few seconds and 400 MB to build).
// It reports the answer's bytes: the text and the structured output.
func BenchmarkGetSourcesUnsure(b *testing.B) {
	mix := evalset.MixV1("../..")
	b.Run("mix-v1", func(b *testing.B) {
		reg, err := registry.LoadFile(mix.Registry)
		if err != nil {
			b.Fatal(err)
		}
		qs, err := mix.Questions()
		if err != nil {
			b.Fatal(err)
		}
		benchSureUnsure(b, reg, qs)
	})
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("generated-%d", n), func(b *testing.B) {
			doc := registrytest.Generate(n, 1)
			reg, err := registry.LoadLimit(gen.EncodeRegistry(doc), 1<<30)
			if err != nil {
				b.Fatal(err)
			}
			// The issue's own not-confident question, then those of the
			// generated ones that are not answered confidently.
			qs := append([]string{"learn rust ownership"}, registrytest.Queries(doc, 256, 1)...)
			benchSureUnsure(b, reg, qs)
		})
	}
}

// benchSureUnsure splits qs by their answers on reg, then measures each
// part.
func benchSureUnsure(b *testing.B, reg *registry.Registry, qs []string) {
	h := New(Config{Registry: reg, Matcher: matcher.New(reg), Threshold: DefaultThreshold})
	var sure, unsure []string
	for _, q := range qs {
		if _, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr(q)}); err == nil {
			sure = append(sure, q)
		} else {
			unsure = append(unsure, q)
		}
	}
	for _, name := range []string{"sure", "unsure"} {
		part := sure
		if name == "unsure" {
			part = unsure
		}
		b.Run(name, func(b *testing.B) {
			if len(part) == 0 {
				b.Skip("no such question")
			}
			var text, structured int
			buf := make([]byte, 0, 16<<10)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				var t int
				t, buf = renderAnswer(b, h, part[i%len(part)], buf[:0])
				text += t
				structured += len(buf)
			}
			b.ReportMetric(float64(text)/float64(b.N), "text-B/op")
			b.ReportMetric(float64(structured)/float64(b.N), "structured-B/op")
		})
	}
}

// renderAnswer asks h query and renders the answer as the transport
// does: it returns the text's length and buf with the structured output.
func renderAnswer(b *testing.B, h *Handlers, query string, buf []byte) (text int, _ []byte) {
	out, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: &query})
	var te *gen.ToolError
	switch {
	case err == nil:
		buf = h.AppendGetSourcesText(buf, out)
		text = len(buf)
		buf = buf[:0]
	case errors.As(err, &te):
		text = len(te.Text)
		out = te.Structured.(*gen.GetSourcesOutput)
	default:
		b.Fatal(err)
	}
	buf, err = out.AppendJSON(buf)
	if err != nil {
		b.Fatal(err)
	}
	return text, buf
}

// BenchmarkNoMatch is the listing of a not-confident get_sources answer
// alone: snapshot.noMatch, its text and structured output (not encoded),
// for questions ranked beforehand, so the matcher's share of
// BenchmarkGetSourcesUnsure does not hide what the listing costs. Same
// registries and questions.
func BenchmarkNoMatch(b *testing.B) {
	mix := evalset.MixV1("../..")
	regs := map[string]func() (*registry.Registry, []string){
		"mix-v1": func() (*registry.Registry, []string) {
			reg, err := registry.LoadFile(mix.Registry)
			if err != nil {
				b.Fatal(err)
			}
			qs, err := mix.Questions()
			if err != nil {
				b.Fatal(err)
			}
			return reg, qs
		},
	}
	for _, n := range []int{1000, 100000} {
		regs[fmt.Sprintf("generated-%d", n)] = func() (*registry.Registry, []string) {
			doc := registrytest.Generate(n, 1)
			reg, err := registry.LoadLimit(gen.EncodeRegistry(doc), 1<<30)
			if err != nil {
				b.Fatal(err)
			}
			return reg, append([]string{"learn rust ownership"}, registrytest.Queries(doc, 256, 1)...)
		}
	}
	// mix-v1-catalogued: a session given the catalog in its instructions,
	// as stdio and HTTP sessions of a registry within serve --catalog-max
	// are: the answer shows the described categories alone.
	for _, name := range []string{"mix-v1", "mix-v1-catalogued", "generated-1000", "generated-100000"} {
		b.Run(name, func(b *testing.B) {
			base, catalogued := strings.CutSuffix(name, "-catalogued")
			reg, qs := regs[base]()
			h := New(Config{Registry: reg, Matcher: matcher.New(reg), Threshold: DefaultThreshold})
			s := h.cur.Load()
			type asked struct {
				q      string
				ranked []matcher.Scored
			}
			var unsure []asked
			for _, q := range qs {
				ranked, confident, err := matchFor(s.matcher, len(s.slugs), q, DefaultThreshold)
				if err == nil && !confident {
					unsure = append(unsure, asked{q, ranked})
				}
			}
			if len(unsure) == 0 {
				b.Skip("no such question")
			}
			given := ""
			if catalogued {
				given = catalogVersion(s)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				a := unsure[i%len(unsure)]
				if err := s.noMatch(a.q, a.ranked, DefaultThreshold, given); err == nil {
					b.Fatal("an answer")
				}
			}
		})
	}
}
