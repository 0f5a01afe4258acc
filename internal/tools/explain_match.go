package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
)

// explainer is the matcher that can say why it scored what it did.
type explainer interface {
	Explain(query string, limit int) ([]matcher.Explanation, error)
}

// defaultExplainLimit is how many candidates explain_match shows by default.
const defaultExplainLimit = 5

// ExplainMatch implements gen.ToolHandlers.
func (h *Handlers) ExplainMatch(_ context.Context, in *gen.ExplainMatchInput) (*gen.ExplainMatchOutput, error) {
	s := h.cur.Load()
	threshold := h.threshold
	if in.Threshold != nil {
		threshold = *in.Threshold
	}
	limit := defaultExplainLimit
	if in.Limit != nil {
		limit = *in.Limit
	}
	out := &gen.ExplainMatchOutput{Query: in.Query, Threshold: threshold, Candidates: []gen.Candidate{}}
	if err := h.withheld(s, out); err != nil {
		return nil, err
	}
	x, ok := s.matcher.(explainer)
	if !ok {
		return nil, &gen.ToolError{Text: "This server runs the baseline matcher, which cannot explain its scores. Start it with --matcher index (the default).", Structured: out}
	}
	ex, err := x.Explain(in.Query, limit)
	switch {
	case errors.Is(err, matcher.ErrEmptyQuery), errors.Is(err, matcher.ErrOnlyStopWords):
		return nil, &gen.ToolError{Text: "Query '" + in.Query + "' has no words that say anything about a topic, so nothing is scored. Name the topic itself.", Structured: out}
	case err != nil:
		return nil, err
	}
	for i, e := range ex {
		c, _ := s.reg.Category(e.Slug)
		cand := gen.Candidate{
			Slug: e.Slug, Name: c.Name, Score: e.Score, Coverage: clamp01(e.Coverage), Phrase: clamp01(e.Phrase), Adjacency: clamp01(e.Adjacency),
			Fields: []gen.FieldCoverage{}, Words: []gen.Word{},
		}
		if e.BestPhrase != "" {
			cand.BestPhrase = ptr(e.BestPhrase)
		}
		if e.Doubt != "" {
			cand.Doubt = ptr(e.Doubt)
		}
		cand.Evidence, cand.Semantic = ptr(clamp01(e.Evidence)), ptr(clamp01(e.Semantic))
		if i == 0 {
			cand.Margin = ptr(clamp01(e.Lead))
			if e.Capped {
				cand.Capped = ptr(true)
			}
			for _, f := range e.Calibration {
				cand.Calibration = append(cand.Calibration, gen.Factor{Factor: f.Factor, Value: f.Value, Effect: f.Effect})
			}
		}
		for f := range matcher.NumFields {
			if v := e.Fields[f]; v > 0 {
				cand.Fields = append(cand.Fields, gen.FieldCoverage{Field: matcher.Field(f).String(), Coverage: clamp01(v)})
			}
		}
		for _, w := range e.Words {
			word := gen.Word{Word: w.Word, Kind: w.Kind.String(), Weight: clamp01(w.Weight), Contribution: clamp01(w.Contribution)}
			if w.Common {
				word.Common = ptr(true)
			}
			if w.Term != "" {
				word.Term, word.Quality = ptr(w.Term), ptr(clamp01(w.Quality))
				for _, f := range w.In {
					word.In = append(word.In, f.String())
				}
			}
			cand.Words = append(cand.Words, word)
		}
		if i == 0 && e.Score >= threshold {
			out.Matched = ptr(e.Slug)
		}
		out.Candidates = append(out.Candidates, cand)
	}
	return out, nil
}

// clamp01 keeps a float within [0, 1] against rounding at the edges.
func clamp01(v float64) float64 { return min(max(v, 0), 1) }

// ExplainMatchText implements gen.ToolHandlers.
func (h *Handlers) ExplainMatchText(out *gen.ExplainMatchOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Query: %s\nThreshold: %s\n", out.Query, fmtScore(out.Threshold))
	if out.Matched != nil {
		fmt.Fprintf(&b, "get_sources answers with: %s\n", *out.Matched)
	} else {
		b.WriteString("get_sources answers with: nothing (no candidate reaches the threshold)\n")
	}
	for i, c := range out.Candidates {
		fmt.Fprintf(&b, "\n%d. %s (%s), score %.3f\n   coverage %.3f, phrase %.3f, adjacency %.3f", i+1, c.Slug, registry.Visible(c.Name), c.Score, c.Coverage, c.Phrase, c.Adjacency)
		if c.Semantic != nil {
			fmt.Fprintf(&b, ", word vectors %.3f", *c.Semantic)
		}
		if c.Evidence != nil {
			fmt.Fprintf(&b, "; evidence %.3f", *c.Evidence)
		}
		b.WriteString("\n")
		if c.BestPhrase != nil {
			fmt.Fprintf(&b, "   best phrase: %s\n", registry.Visible(*c.BestPhrase))
		}
		if c.Doubt != nil {
			fmt.Fprintf(&b, "   in doubt: %s (evidence scaled down)\n", *c.Doubt)
		}
		if c.Capped != nil && *c.Capped {
			fmt.Fprintf(&b, "   confidence capped at %.2f: the doubt overrules the factors below\n", c.Score)
		}
		if len(c.Calibration) > 0 {
			b.WriteString("   factors of the confidence (effects on the log-odds z):")
			for _, f := range c.Calibration {
				fmt.Fprintf(&b, " %s %+.2f;", f.Factor, f.Effect)
			}
			b.WriteString("\n")
		}
		var fields []string
		for _, f := range c.Fields {
			fields = append(fields, fmt.Sprintf("%s %.3f", f.Field, f.Coverage))
		}
		if len(fields) == 0 {
			fields = []string{"none"}
		}
		fmt.Fprintf(&b, "   coverage by field: %s\n", strings.Join(fields, ", "))
		for _, w := range c.Words {
			found := "met nothing in this category"
			if w.Term != nil {
				found = fmt.Sprintf("met %q (%s, quality %.2f) in %s", *w.Term, w.Kind, *w.Quality, strings.Join(w.In, ", "))
			} else if w.Kind == matcher.KindNone.String() {
				found = "unknown to the registry"
			}
			if w.Common != nil && *w.Common {
				found += "; an ordinary English word"
			}
			fmt.Fprintf(&b, "   - %s: weight %.3f, +%.3f, %s\n", w.Word, w.Weight, w.Contribution, found)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
