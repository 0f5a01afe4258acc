package matcher

import (
	"slices"

	"github.com/three-good-sources/3gs/internal/matcher/words"
)

// Explanation is how one category's score came about: the numbers a
// curator reads to see why a query went where it went (3gs query
// --explain) and which field to change.
type Explanation struct {
	Slug  string
	Score float64
	// Coverage is the share of the query's weight the category explains;
	// Fields splits it by the field the evidence came from.
	Coverage float64
	Fields   [numFields]float64
	// Phrase is the two-way coverage of the best short field, shown in
	// BestPhrase as stored (stems, stop words removed).
	Phrase     float64
	BestPhrase string
	// Adjacency is the weight share of query word pairs found side by side.
	Adjacency float64
	// Doubt, when set, says why the evidence is too thin to answer with
	// this category: its evidence was scaled down by the doubt factor.
	Doubt string
	// Evidence is the ranking score before calibration: the lexical score
	// (scaled down when doubted), blended with Semantic for a doubted
	// category. Score is Evidence calibrated (see calibrate.go).
	Evidence float64
	// Semantic is how close in meaning, by word vectors, the query is to
	// what the curator wrote, above the registry's mean (0 when word
	// vectors are off, as they are for large registries).
	Semantic float64
	// Lead, for the best category only, is how far its evidence stands
	// above the runner-up's; Calibration lists what moved its confidence
	// (empty when nothing was calibrated). Capped says a doubt overruled
	// the model and held the confidence just below the default threshold.
	Lead        float64
	Calibration []FactorEffect
	Capped      bool
	// Grounded is Scored.Grounded: a query word meets the category, so
	// it may be offered as a candidate.
	Grounded bool
	Words    []WordExplanation
}

// WordExplanation is one query word's part in a category's score.
type WordExplanation struct {
	Word   string    // as written, lowercased
	Stem   string    // its stem
	Kind   MatchKind // how it met the vocabulary
	Weight float64   // its share of the query's weight
	// Term is the registry term it met in this category ("" when none),
	// with the match quality and the fields the term is in.
	Term    string
	Quality float64
	In      []Field
	// Common says the word is ordinary English (data/frequency.txt): it is
	// never typo-corrected, and unknown it weighs less the commoner it is.
	Common bool
	// Contribution is the word's part of Coverage.
	Contribution float64
}

// NumFields is the number of fields, for iterating Explanation.Fields.
const NumFields = int(numFields)

// Explain scores the query like Match and explains the limit best
// categories by their evidence. Past the first five, Match's long list
// goes on by closeness in meaning (byMeaning), which is not evidence and
// is not explained here, so the two orders can differ there; explain_match
// and 3gs query --explain show five.
func (x *Index) Explain(query string, limit int) ([]Explanation, error) {
	p, err := x.parse(query)
	if err != nil {
		return nil, err
	}
	hits, vectors := x.candidates(p, limit)
	evidence := make([]float64, len(hits))
	for i, h := range hits {
		evidence[i] = h.Score
	}
	f, capped, calibrated := x.calibrate(p, hits, vectors)
	hits = hits[:min(len(hits), limit)]
	out := make([]Explanation, 0, len(hits))
	for i, h := range hits {
		c := h.cat
		e := Explanation{Slug: h.Slug, Evidence: evidence[i], Semantic: float64(h.sem), Grounded: h.ev.grounded}
		if i == 0 && calibrated {
			e.Lead, e.Calibration, e.Capped = f[factorLead], effects(&f), capped
		}
		var acc float32
		for _, w := range p.words {
			we := WordExplanation{Word: w.raw, Stem: w.stem, Kind: w.kind, Weight: float64(w.weight / p.total)}
			_, we.Common = words.Zipf(w.raw)
			var bestV float32
			var bestMask uint8
			for _, cd := range w.cands {
				mask, ok := x.fieldsFor(&w, cd.term, c)
				if v := cd.quality * x.strength[mask]; ok && v > bestV {
					bestV, bestMask = v, mask
					we.Term, we.Quality = x.terms[cd.term], float64(cd.quality)
				}
			}
			acc += w.weight * bestV
			we.Contribution = float64(w.weight * bestV / p.total)
			we.In = attribute(&x.tune, bestMask, we.Contribution, &e.Fields)
			e.Words = append(e.Words, we)
		}
		x.finish(p, c, acc/p.total, &e, nil)
		if h.ev.kind == doubtVectorsOnly {
			e.Doubt = h.ev.reason()
		}
		e.Score = h.Score
		out = append(out, e)
	}
	return out, nil
}

// attribute splits a word's contribution among the fields of mask: the
// strongest field gets its strength, each other field the multi-field
// bonus, scaled to sum to the contribution. It returns the fields,
// strongest first.
func attribute(t *tuning, mask uint8, contribution float64, fields *[numFields]float64) []Field {
	var in []Field
	for f := range numFields {
		if mask&(1<<f) != 0 {
			in = append(in, f)
		}
	}
	if len(in) == 0 || contribution == 0 {
		return in
	}
	slices.SortStableFunc(in, func(a, b Field) int {
		switch {
		case t.fieldStrength[a] > t.fieldStrength[b]:
			return -1
		case t.fieldStrength[a] < t.fieldStrength[b]:
			return 1
		}
		return 0
	})
	parts := make([]float64, len(in))
	sum := 0.0
	for i, f := range in {
		parts[i] = t.multiFieldBonus
		if i == 0 {
			parts[i] = t.fieldStrength[f]
		}
		sum += parts[i]
	}
	for i, f := range in {
		fields[f] += contribution * parts[i] / sum
	}
	return in
}
