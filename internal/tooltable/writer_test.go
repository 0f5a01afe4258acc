package tooltable

import (
	"errors"
	"math"
	"testing"
)

// The writer puts commas between members and items only, whatever came
// before in the buffer, and a number JSON cannot write fails the whole
// value, leaving the buffer as it was before it.
func TestWriter(t *testing.T) {
	w := Writer{Buf: []byte(`"structuredContent":`)}
	w.BeginObject()
	w.Field(`"a":`)
	w.BeginArray()
	w.EndArray()
	w.Key("b\"")
	w.BeginArray()
	for _, v := range []float64{1, 0.5, 1e21, 1e-7} {
		w.Item()
		w.Float(v)
	}
	w.Item()
	w.BeginObject()
	w.EndObject()
	w.Item()
	w.Null()
	w.EndArray()
	w.Key("c")
	w.Int(-3)
	w.Key("d")
	w.Bool(true)
	w.Key("e")
	w.String("x\n")
	w.EndObject()
	got, err := w.Finish(len(`"structuredContent":`))
	want := `"structuredContent":{"a":[],"b\"":[1,0.5,1e+21,1e-7,{},null],"c":-3,"d":true,"e":"x\n"}`
	if err != nil || string(got) != want {
		t.Errorf("got %s, %v\nwant %s", got, err, want)
	}

	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		w := Writer{Buf: []byte("pre")}
		w.BeginObject()
		w.Key("x")
		w.Float(bad)
		w.Key("y")
		w.Float(2)
		w.EndObject()
		if got, err := w.Finish(3); !errors.Is(err, ErrNotFinite) || string(got) != "pre" {
			t.Errorf("%v: %q, %v; want pre and ErrNotFinite", bad, got, err)
		}
	}
}

// A tool error without structured content carries null.
func TestAppendOutputNil(t *testing.T) {
	got, err := AppendOutput([]byte("x:"), nil)
	if err != nil || string(got) != "x:null" {
		t.Errorf("got %q, %v", got, err)
	}
}
