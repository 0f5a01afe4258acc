package tools

import (
	"time"

	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/bytedance/sonic"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/gen/gentest"
)

// TestGetSourcesOutputJSON holds the hand-written encoder to sonic's
// output for the same values: the tool's example result, and random
// outputs with every member set or not, empty and nil lists, strings
// that need escaping and long ones, and floats of every size. A member
// added to the type and not to the encoder fails the field count below.
func TestGetSourcesOutputJSON(t *testing.T) {
	if n := reflect.TypeFor[gen.GetSourcesOutput]().NumField(); n != 14 {
		t.Fatalf("gen.GetSourcesOutput has %d fields; appendGetSourcesOutput writes 14: add the new ones to it", n)
	}
	for typ, n := range map[reflect.Type]int{reflect.TypeFor[gen.AlternativeCategory](): 3, reflect.TypeFor[gen.CandidateCategory](): 4,
		reflect.TypeFor[gen.ClosestCategory](): 2, reflect.TypeFor[gen.AnsweringCurator](): 2, reflect.TypeFor[gen.RankedSource](): 6, reflect.TypeFor[gen.SourceHealth](): 2, reflect.TypeFor[gen.ListedCategory](): 2} {
		if typ.NumField() != n {
			t.Fatalf("%s has %d fields; appendGetSourcesOutput writes %d", typ, typ.NumField(), n)
		}
	}
	check := func(v *gen.GetSourcesOutput) {
		t.Helper()
		want, err := sonic.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendGetSourcesOutput([]byte("pre"), v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "pre"+string(want) {
			t.Fatalf("appendJSON:\n%s\nsonic:\n%s", got[3:], want)
		}
	}
	tool := gen.LookupTool("get_sources")
	ex, err := gentest.DecodeOutput(tool.Name, []byte(tool.Examples.Result))
	if err != nil {
		t.Fatal(err)
	}
	check(ex.(*gen.GetSourcesOutput))

	r := rand.New(rand.NewPCG(5, 6))
	str := func() string {
		pieces := []string{"rust", "é日本", "\"", "\\", "\n", "\t", "\x01", "\u2028", "<&>", " ", strings.Repeat("long text ", 10), "\xff"}
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	float := func() float64 {
		switch r.IntN(4) {
		case 0:
			return r.Float64()
		case 1:
			return math.Float64frombits(r.Uint64() &^ (0x7ff << 52)) // finite, often tiny
		case 2:
			return float64(r.IntN(100)) / 100
		}
		return r.NormFloat64() * 1e22
	}
	maybe := func() bool { return r.IntN(2) == 0 }
	for range 5000 {
		v := &gen.GetSourcesOutput{Query: str()}
		if maybe() {
			for range r.IntN(3) {
				v.Alternatives = append(v.Alternatives, gen.AlternativeCategory{Name: str(), Score: float(), Slug: str()})
			}
		}
		if maybe() {
			v.AvailableCategories = []string{}
			for range r.IntN(3) {
				v.AvailableCategories = append(v.AvailableCategories, str())
			}
		}
		if maybe() {
			for range r.IntN(3) {
				v.Candidates = append(v.Candidates, gen.CandidateCategory{Description: str(), Name: str(), Score: float(), Slug: str()})
			}
		}
		if maybe() {
			n := r.IntN(200000) - 10
			v.CategoryCount = &n
		}
		if maybe() {
			v.Closest = &gen.ClosestCategory{Score: float(), Slug: str()}
		}
		if maybe() {
			v.Curator = &gen.AnsweringCurator{Name: str(), Pubkey: str()}
		}
		if maybe() {
			s := str()
			v.Description = &s
		}
		if maybe() {
			v.MoreCategories = []gen.ListedCategory{}
			for range r.IntN(3) {
				v.MoreCategories = append(v.MoreCategories, gen.ListedCategory{Name: str(), Slug: str()})
			}
		}
		if maybe() {
			s := str()
			v.Name = &s
		}
		if maybe() {
			s := str()
			v.RegistryVersion = &s
		}
		if maybe() {
			f := float()
			v.Score = &f
		}
		if maybe() {
			s := str()
			v.Slug = &s
		}
		switch r.IntN(3) {
		case 0:
			v.Sources = []gen.RankedSource{}
		case 1:
			for range r.IntN(4) + 1 {
				src := gen.RankedSource{Name: str(), Rank: r.IntN(5) - 1, Type: str(), URL: str(), Why: str()}
				if maybe() {
					src.Health = &gen.SourceHealth{Status: gen.CheckStatus(str()), CheckedAt: time.Unix(r.Int64N(1<<34), r.Int64N(1e9)).In(time.FixedZone("", (r.IntN(48)-24)*1800))}
				}
				v.Sources = append(v.Sources, src)
			}
		}
		check(v)
	}
	nan := math.NaN()
	if _, err := appendGetSourcesOutput(nil, &gen.GetSourcesOutput{Score: &nan}); err == nil {
		t.Error("a NaN score encoded")
	}
}
