package gen_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bytedance/sonic"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/gen/gentest"
)

// sonicSorted is sonic's default encoder, which the tool results were
// written with before they had encoders of their own, with map keys
// sorted as encoding/json sorts them.
var sonicSorted = sonic.Config{SortMapKeys: true}.Froze()

// checkOutput holds v's generated AppendJSON to sonic's output for the
// same value, and, when clean (no string that the two escape
// differently: invalid UTF-8, U+2028, U+2029, <, > and &), to
// encoding/json's too.
func checkOutput(t *testing.T, v gen.ToolOutput, clean bool) {
	t.Helper()
	want, err := sonicSorted.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.AppendJSON([]byte("pre"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "pre"+string(want) {
		t.Fatalf("%T: AppendJSON:\n%s\nsonic:\n%s", v, got[3:], want)
	}
	if !clean {
		return
	}
	var std bytes.Buffer
	enc := json.NewEncoder(&std)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if string(got[3:])+"\n" != std.String() {
		t.Fatalf("%T: AppendJSON:\n%s\nencoding/json:\n%s", v, got[3:], std.Bytes())
	}
}

// TestToolOutputsJSON holds every tool's generated output encoder to
// sonic and encoding/json: for the tool's example result, and for random
// values of its output type reaching every field of every type it uses,
// each pointer nil or set, each list and map nil, empty or not, scalars
// zero or not (so omitempty is exercised both ways), strings that need
// escaping and floats of every size.
func TestToolOutputsJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range gen.Tools {
		tool := &gen.Tools[i]
		ex, err := gentest.DecodeOutput(tool.Name, []byte(tool.Examples.Result))
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		out, ok := ex.(gen.ToolOutput)
		if !ok {
			t.Fatalf("%s: %T is not a gen.ToolOutput", tool.Name, ex)
		}
		checkOutput(t, out, true)
		typ := reflect.TypeOf(ex).Elem()
		for n := range 300 {
			clean := n%2 == 0
			v := reflect.New(typ)
			fill(r, v.Elem(), clean, 0)
			checkOutput(t, v.Interface().(gen.ToolOutput), clean)
		}
	}
}

// fill sets v, of a generated type, to random content.
func fill(r *rand.Rand, v reflect.Value, clean bool, depth int) {
	switch v.Kind() {
	case reflect.Pointer:
		if r.IntN(3) > 0 && depth < 8 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(r, v.Elem(), clean, depth+1)
		}
	case reflect.Slice:
		switch r.IntN(3) {
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		case 2:
			if depth < 8 {
				n := 1 + r.IntN(3)
				v.Set(reflect.MakeSlice(v.Type(), n, n))
				for i := range n {
					fill(r, v.Index(i), clean, depth+1)
				}
			}
		}
	case reflect.Map:
		switch r.IntN(3) {
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		case 2:
			if depth < 8 {
				v.Set(reflect.MakeMap(v.Type()))
				for range 1 + r.IntN(3) {
					k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
					fill(r, k, clean, depth+1)
					fill(r, e, clean, depth+1)
					v.SetMapIndex(k, e)
				}
			}
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			// In UTC, as the decoders leave every time: the encoders write
			// UTC, and sonic a time's own offset.
			if r.IntN(4) > 0 {
				v.Set(reflect.ValueOf(time.Unix(r.Int64N(4e9), int64(r.IntN(2))*int64(r.IntN(1e9))).UTC()))
			}
			return
		}
		for i := range v.NumField() {
			fill(r, v.Field(i), clean, depth+1)
		}
	case reflect.String:
		if r.IntN(4) > 0 {
			v.SetString(randomString(r, clean))
		}
	case reflect.Int:
		if r.IntN(4) > 0 {
			v.SetInt(int64(r.IntN(400000) - 200000))
		}
	case reflect.Float64:
		if r.IntN(4) > 0 {
			v.SetFloat(randomFloat(r))
		}
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	default:
		panic("fill: a generated type holds a " + v.Type().String() + "; teach fill and the encoder emitter about it")
	}
}

// randomString is a string of pieces that need escaping or not; clean
// leaves out those sonic and encoding/json write differently.
func randomString(r *rand.Rand, clean bool) string {
	pieces := []string{"rust", "é日本", "\"", "\\", "\n", "\t", "\r", "\x01", "\x1f", " ", "/", strings.Repeat("long text ", 10), "😀"}
	if !clean {
		pieces = append(pieces, "\u2028", "<&>", "\xff")
	}
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// randomFloat is finite, of any size.
func randomFloat(r *rand.Rand) float64 {
	switch r.IntN(5) {
	case 0:
		return r.Float64()
	case 1:
		return math.Float64frombits(r.Uint64() &^ (0x7ff << 52)) // finite, often tiny
	case 2:
		return float64(r.IntN(100)) / 100
	case 3:
		return -float64(r.IntN(1 << 20))
	}
	return r.NormFloat64() * 1e22
}

// TestGetSourcesOutputJSON holds get_sources' generated encoder, the one
// on nearly every call, to sonic's output for the same values: the tool's
// example result, and random outputs with every member set or not, empty
// and nil lists, strings that need escaping and long ones, and floats of
// every size. A NaN score is an error, and leaves dst as it was.
func TestGetSourcesOutputJSON(t *testing.T) {
	check := func(v *gen.GetSourcesOutput) {
		t.Helper()
		checkOutput(t, v, false)
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
					src.Health = &gen.SourceHealth{Status: gen.CheckStatus(str()), CheckedAt: time.Unix(r.Int64N(4e9), int64(r.IntN(1e9))).UTC()}
				}
				v.Sources = append(v.Sources, src)
			}
		}
		check(v)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		got, err := (&gen.GetSourcesOutput{Score: &bad, Sources: []gen.RankedSource{}}).AppendJSON([]byte("pre"))
		if err == nil || string(got) != "pre" {
			t.Errorf("a score of %v: %q, %v; want an error and dst unchanged", bad, got, err)
		}
	}
	var nilOut *gen.GetSourcesOutput
	if got, err := nilOut.AppendJSON(nil); err != nil || string(got) != "null" {
		t.Errorf("a nil output: %q, %v; want null", got, err)
	}
}

// BenchmarkGetSourcesOutputJSON measures the generated encoder on
// get_sources' example result, against sonic's on the same value.
func BenchmarkGetSourcesOutputJSON(b *testing.B) {
	tool := gen.LookupTool("get_sources")
	ex, err := gentest.DecodeOutput(tool.Name, []byte(tool.Examples.Result))
	if err != nil {
		b.Fatal(err)
	}
	v := ex.(*gen.GetSourcesOutput)
	buf := make([]byte, 0, 4096)
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sonic", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sonic.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
