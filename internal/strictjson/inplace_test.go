package strictjson

import (
	"strings"
	"testing"
	"unsafe"
)

// countTokens sizes the token buffer of a large document; for well-formed
// JSON it must be exact, whatever the strings hold (escaped quotes and
// backslashes, brackets and digits) and wherever whitespace falls.
func TestCountTokens(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, `""`, `0`, `true`, `null`, `-1.5e3`,
		`{"a":1,"b":[true,false,null],"c":{"d":"e"},"f":[],"g":{}}`,
		` { "a" : [ 1 , -2 , 3.5 ] , "b" : "x\"y\\" , "c" : "[{1,2}]:," } `,
		`[[[]],[{}],"\\\\",""]`,
		"{\n  \"k\": \"t\\u00e9\",\n  \"n\": [\n    12,\n    null\n  ]\n}\n",
	} {
		tz := new(tokenizer)
		if err := tz.tokenize([]byte(doc), MaxDepth, false); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if got, want := countTokens([]byte(doc)), len(tz.toks); got != want {
			t.Errorf("%s: counted %d tokens, tokenize made %d", doc, got, want)
		}
	}
}

// DecodeInPlace's strings share the input's memory; Decode's do not, so a
// caller may reuse its buffer after Decode. A document large enough to be
// presized decodes the same either way.
func TestDecodeInPlace(t *testing.T) {
	readAll := func(d *Decoder, p *Path, out *[]string) {
		if !d.Array(p) {
			return
		}
		for d.NextItem() {
			if v, ok := d.String(p); ok {
				*out = append(*out, v)
			}
		}
	}
	inside := func(s string, data []byte) bool {
		p, base := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(data)))
		return p >= base && p < base+uintptr(len(data))
	}
	items := make([]string, 20000) // over presizeFrom once encoded
	for i := range items {
		items[i] = `"item number ` + strings.Repeat("x", i%7) + `"`
	}
	data := []byte("[" + strings.Join(items, ",") + "]")
	if len(data) < presizeFrom {
		t.Fatalf("test document is %d bytes, under presizeFrom", len(data))
	}
	shared, err := DecodeInPlace(data, readAll)
	if err != nil || len(*shared) != len(items) || !inside((*shared)[7], data) {
		t.Fatalf("DecodeInPlace: %d strings, %v; shares the input: %v", len(*shared), err, err == nil && inside((*shared)[7], data))
	}
	copied, err := Decode(data, readAll)
	if err != nil || len(*copied) != len(items) || inside((*copied)[7], data) {
		t.Fatalf("Decode: %d strings, %v", len(*copied), err)
	}
	for i := range *copied {
		if (*copied)[i] != (*shared)[i] {
			t.Fatalf("item %d: %q and %q", i, (*copied)[i], (*shared)[i])
		}
	}
}

// FuzzCountTokens: for any document tokenize accepts, countTokens gives
// the number of tokens it made, so a presized buffer is never grown.
func FuzzCountTokens(f *testing.F) {
	f.Add([]byte(`{"a":[1,true,null,"x\"]"],"b":{}}`))
	f.Add([]byte(`[ -0.5e+3 , "\\" , [] ]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tz := new(tokenizer)
		if err := tz.tokenize(data, MaxDepth, false); err != nil {
			return
		}
		if got := countTokens(data); got != len(tz.toks) {
			t.Fatalf("%q: counted %d tokens, tokenize made %d", data, got, len(tz.toks))
		}
	})
}

// A token stays 24 bytes: at 100,000 categories the token slice is the
// largest thing a load holds besides the file itself.
func TestTokenSize(t *testing.T) {
	if n := unsafe.Sizeof(token{}); n != 24 {
		t.Errorf("a token is %d bytes, want 24", n)
	}
}
