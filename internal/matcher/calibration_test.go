package matcher

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/internal/registry"
)

var recalibrate = flag.Bool("calibrate", false, "refit the confidence model and rewrite calibration.go")

// calibrationRidge is the L2 penalty per example on the weights (not the
// bias): enough to keep a factor that few examples have from taking an
// extreme weight.
const calibrationRidge = 0.0001

// calDims is the number of the model's coefficients: the weights, then
// the bias.
const calDims = int(numFactors) + 1

// calibrationExample is the best candidate of one training query.
type calibrationExample struct {
	shape  string
	f      [numFactors]float64
	right  bool // the best candidate is the expected category
	weight float64
	// overruled: the model's answer is not used (see overruled), so the
	// example is not fitted on, and counts as not answered.
	overruled bool
}

// calibrationSet is one registry with its queries.
type calibrationSet struct {
	name  string
	reg   *registry.Registry
	cases []shapedCase
}

// fitSets are the development sets the model is fitted on; each is also
// left out of a fit in turn and judged by it, the check that the model
// carries over to questions it was not fitted on.
var fitSets = []string{"dev", "dev2"}

// checkSets are development sets the model is judged on but not fitted
// on: dev3 was written after the fit, to see how it does on questions and
// categories it never saw. Fitting on it too (tried with wrong answers
// costing 8, 10 and 12) left its own confident wrong answers where they
// were, took more confident right ones than it spared wrong ones
// elsewhere, and made the shipped registry's "Learning Go" unconfident.
var checkSets = []string{"dev3"}

// devSet reads the development set testdata/NAME.
func devSet(t *testing.T, name string) calibrationSet {
	dir := filepath.Join("testdata", name)
	reg, err := registry.LoadFile(filepath.Join(dir, "registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	return calibrationSet{name, reg, readShaped(t, filepath.Join(dir, "queries.tsv"))}
}

// calibrationSets are the sets the model is fitted on: the development
// sets and our registry's evaluation, never the held-out set, and not the
// shared fixture's, which a clone does not have: the fit must be
// reproducible anywhere. The registry evaluation has no shapes; its lines
// are "own" (or "offtopic").
func calibrationSets(t *testing.T) []calibrationSet {
	var sets []calibrationSet
	for _, name := range fitSets {
		sets = append(sets, devSet(t, name))
	}
	asShaped := func(cases []evalCase) []shapedCase {
		var out []shapedCase
		for _, c := range cases {
			shape := "own"
			if c.want == "NONE" {
				shape = "offtopic"
			}
			out = append(out, shapedCase{c.line, shape, c.want, c.query})
		}
		return out
	}
	own, err := registry.Load(threegs.DefaultRegistry)
	if err != nil {
		t.Fatal(err)
	}
	sets = append(sets, calibrationSet{"own", own, asShaped(readEval(t, "testdata/eval.tsv"))})
	return sets
}

// examples ranks every query of set, once with word vectors and once
// without (as a registry too large for them is matched), and returns the
// best candidate's factors with whether it is right.
func (set calibrationSet) examples() []calibrationExample {
	var out []calibrationExample
	for _, vectors := range []bool{true, false} {
		x := New(set.reg)
		if !vectors {
			x.simTerms, x.simVecs = nil, nil
		}
		for _, c := range set.cases {
			p, err := x.parse(c.query)
			if err != nil {
				continue
			}
			hits, ran := x.candidates(p, 5)
			if len(hits) == 0 {
				continue
			}
			w := 1.0
			if hits[0].Slug != c.want {
				w = costWrongAnswer
			}
			out = append(out, calibrationExample{c.shape, x.bestFactors(p, hits, ran), hits[0].Slug == c.want && c.want != "NONE", w, overruled(p, &hits[0])})
		}
	}
	return out
}

// fitCalibration fits the logistic model with every weight of the sign
// factorSign gives it: an unconstrained fit, then, while some weight has
// the wrong sign, the one furthest off is held at zero and the rest
// refitted (an active-set method). Each fit is Newton's method, which
// converges to the one optimum of the penalized likelihood whatever the
// starting point, so a refit reproduces the weights.
func fitCalibration(ex []calibrationExample) calibrationModel {
	var held [calDims]bool
	for {
		m := fitHeld(ex, &held)
		worst, off := -1, 0.0
		for i, w := range m.weights {
			if v := -float64(factorSign[i]) * w; v > off {
				worst, off = i, v
			}
		}
		if worst < 0 {
			return m
		}
		held[worst] = true
	}
}

// fitHeld fits the model with the weights held marks fixed at zero.
func fitHeld(ex []calibrationExample, held *[calDims]bool) calibrationModel {
	const d = calDims
	var w [d]float64
	var total float64
	var fit []calibrationExample
	for _, e := range ex {
		if !e.overruled {
			fit = append(fit, e)
			total += e.weight
		}
	}
	ex = fit
	ridge := calibrationRidge * total
	row := func(e *calibrationExample) (r [d]float64) {
		copy(r[:], e.f[:])
		r[d-1] = 1
		for j := range r {
			if held[j] {
				r[j] = 0
			}
		}
		return r
	}
	for range 50 {
		var g [d]float64
		var h [d][d]float64
		for i := range ex {
			r := row(&ex[i])
			z := 0.0
			for j := range r {
				z += w[j] * r[j]
			}
			p := sigmoid(z)
			y := 0.0
			if ex[i].right {
				y = 1
			}
			for j := range r {
				g[j] += ex[i].weight * (p - y) * r[j]
				for k := range r {
					h[j][k] += ex[i].weight * p * (1 - p) * r[j] * r[k]
				}
			}
		}
		for j := range d - 1 {
			g[j] += ridge * w[j]
			h[j][j] += ridge
		}
		step := solve(h, g)
		done := true
		for j := range w {
			w[j] -= step[j]
			done = done && math.Abs(step[j]) < 1e-10
		}
		if done {
			break
		}
	}
	var m calibrationModel
	copy(m.weights[:], w[:d-1])
	m.bias = w[d-1]
	return m
}

// solve returns x with a·x = b, by Gaussian elimination with partial
// pivoting (a is small, symmetric and positive definite).
func solve(a [calDims][calDims]float64, b [calDims]float64) [calDims]float64 {
	const N = calDims
	for c := range N {
		p := c
		for r := c + 1; r < N; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		b[c], b[p] = b[p], b[c]
		for r := c + 1; r < N; r++ {
			k := a[r][c] / a[c][c]
			for j := c; j < N; j++ {
				a[r][j] -= k * a[c][j]
			}
			b[r] -= k * b[c]
		}
	}
	var x [calDims]float64
	for r := N - 1; r >= 0; r-- {
		s := b[r]
		for j := r + 1; j < N; j++ {
			s -= a[r][j] * x[j]
		}
		x[r] = s / a[r][r]
	}
	return x
}

// TestCalibration refits the confidence model on the development and
// registry sets and checks that calibration.go holds what the fit gives:
// a change to ranking or to the sets needs a refit (-calibrate), which is
// then reviewed like any other change. It also leaves each development
// set out of a fit in turn and reports how that model does on it, and
// how the fitted model does on the sets it is never fitted on.
func TestCalibration(t *testing.T) {
	sets := calibrationSets(t)
	bySet := map[string][]calibrationExample{}
	var all []calibrationExample
	for _, set := range sets {
		bySet[set.name] = set.examples()
		all = append(all, bySet[set.name]...)
	}
	for _, out := range fitSets {
		var train []calibrationExample
		for _, set := range sets {
			if set.name != out {
				train = append(train, bySet[set.name]...)
			}
		}
		m := fitCalibration(train)
		t.Logf("fitted without %s, on %s: %s", out, out, judge(&m, bySet[out]))
	}
	m := fitCalibration(all)
	for _, name := range append(fitSets, "own") {
		t.Logf("fitted on all, on %s: %s", name, judge(&m, bySet[name]))
	}
	for _, name := range checkSets {
		bySet[name] = devSet(t, name).examples()
		t.Logf("fitted on all, on %s (never fitted on): %s", name, judge(&m, bySet[name]))
	}
	// What the threshold trades: confident right answers against wrong
	// ones, per development set, with the fitted model. No threshold
	// gives both the confident right answers the matcher had before
	// confidence rested on the curator's own words and at most 1% wrong
	// ones (issue 32's closing note).
	for _, name := range append(slices.Clone(fitSets), checkSets...) {
		for _, th := range []float64{0.1, 0.2, 0.3, evalThreshold, 0.5} {
			t.Logf("fitted on all, on %s at threshold %.2f: %s", name, th, judgeAt(&m, bySet[name], th))
		}
	}
	if *recalibrate {
		if err := writeCalibration("calibration.go", &m); err != nil {
			t.Fatal(err)
		}
		return
	}
	stale := math.Abs(m.bias-calibration.bias) > 1e-3
	for i := range m.weights {
		stale = stale || math.Abs(m.weights[i]-calibration.weights[i]) > 1e-3
	}
	if stale {
		t.Fatalf("calibration.go does not hold the fitted model; run go test ./internal/matcher -run TestCalibration -calibrate\nfitted: %s", formatCalibration(&m))
	}
}

// judge applies model m to examples, with both ways of matching (with and
// without word vectors) counted, and says how many right answers it
// gives at the default threshold and how many questions it answers that
// it should not.
func judge(m *calibrationModel, ex []calibrationExample) string {
	return judgeAt(m, ex, evalThreshold)
}

// judgeAt is judge at threshold th.
func judgeAt(m *calibrationModel, ex []calibrationExample, th float64) string {
	var in, right, wrong, nm, nmA, off, offA int
	for i := range ex {
		e := &ex[i]
		answered := !e.overruled && sigmoid(m.logit(&e.f)) >= th
		switch {
		case e.shape == "nearmiss":
			nm++
			if answered {
				nmA++
			}
		case e.shape == "offtopic":
			off++
			if answered {
				offA++
			}
		default:
			in++
			if answered && e.right {
				right++
			} else if answered {
				wrong++
			}
		}
	}
	return fmt.Sprintf("confident and right %d/%d, confident and wrong %d, near-miss answered %d/%d, off-topic answered %d/%d", right, in, wrong, nmA, nm, offA, off)
}

func formatCalibration(m *calibrationModel) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "\tbias: %.4f,\n\tweights: [numFactors]float64{\n", m.bias)
	for i, w := range m.weights {
		fmt.Fprintf(&b, "\t\t%.4f, // %s\n", w, factor(i))
	}
	b.WriteString("\t},\n")
	return b.String()
}

var fittedBlock = regexp.MustCompile(`(?s)(// BEGIN FITTED\n).*(\t// END FITTED)`)

// writeCalibration replaces the fitted block of path with m.
func writeCalibration(path string, m *calibrationModel) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !fittedBlock.Match(src) {
		return fmt.Errorf("%s: no BEGIN FITTED / END FITTED block", path)
	}
	block := "// BEGIN FITTED\n" + formatCalibration(m) + "\t// END FITTED"
	out, err := format.Source(fittedBlock.ReplaceAllLiteral(src, []byte(block)))
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}
