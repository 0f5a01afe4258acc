package strictjson

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// readAny reads any value through the Decoder's own steps, entering lazy
// values as the generated decoders do, so a split document and a whole
// one can be compared.
func readAny(d *Decoder, p *Path) any {
	t := d.cur()
	if t.kind == kindLazy {
		if !d.enter(p, t) {
			return "unreadable"
		}
		t = d.cur()
	}
	switch t.kind {
	case kindObject:
		d.pos++
		m := [][2]any{}
		for {
			k, more := d.NextKey()
			if !more {
				return m
			}
			kp := p.Key(k)
			m = append(m, [2]any{k, readAny(d, &kp)})
		}
	case kindArray:
		d.pos++
		a := []any{}
		for i := 0; d.NextItem(); i++ {
			ip := p.Index(i)
			a = append(a, readAny(d, &ip))
		}
		return a
	case kindString:
		s, _ := d.String(p)
		return s
	case kindNumber:
		f, _ := d.Float(p)
		return f
	case kindBool:
		b, _ := d.Bool(p)
		return b
	}
	d.pos++
	return nil
}

// both tokenizes data whole and split, and reads each.
func both(t *testing.T, data []byte) (whole, split any, wholeErr, splitErr *Error) {
	t.Helper()
	read := func(tz *tokenizer, err *Error) any {
		if err != nil {
			return nil
		}
		d := &Decoder{toks: tz.toks, nums: tz.nums, tz: tz}
		v := readAny(d, nil)
		if d.pos != len(d.toks) {
			t.Fatalf("%s: read %d of %d tokens", data, d.pos, len(d.toks))
		}
		for _, f := range d.outer {
			if f.pos != len(f.toks) {
				t.Fatalf("%s: read %d of %d outer tokens", data, f.pos, len(f.toks))
			}
		}
		return v
	}
	a := new(tokenizer)
	wholeErr = a.tokenize(data, MaxDepth, false)
	b := new(tokenizer)
	b.src, b.maxDepth = string(data), MaxDepth
	splitErr = b.split(data)
	return read(a, wholeErr), read(b, splitErr), wholeErr, splitErr
}

// A document split into lazy values reads exactly as it does whole,
// whatever its strings hold (escapes, brackets, quotes) and wherever
// whitespace falls.
func TestSplitReadsTheSame(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, `""`, `0`, `true`, `null`, `-1.5e3`,
		`{"a":1,"b":[true,false,null],"c":{"d":"e"},"f":[],"g":{}}`,
		` { "a" : [ 1 , -2 , 3.5 ] , "b" : "x\"y\\" , "c" : "[{1,2}]:," } `,
		`[[[]],[{}],"\\\\",""]`,
		"{\n  \"k\\u00e9\": \"t\\u00e9\",\n  \"n\": [\n    12,\n    null\n  ]\n}\n",
		`{"categories":{"a-b":{"name":"A \"quoted\" }] name","sources":[{"rank":1},{"rank":2.5}]},"c":{"x":[[1,[2]],{"y":{}}]}}}`,
	} {
		whole, split, we, se := both(t, []byte(doc))
		if we != nil || se != nil {
			t.Fatalf("%s: %v, %v", doc, we, se)
		}
		if !reflect.DeepEqual(whole, split) {
			t.Errorf("%s:\nwhole %v\nsplit %v", doc, whole, split)
		}
	}
}

// FuzzSplit: any document tokenize accepts whole reads the same split.
func FuzzSplit(f *testing.F) {
	f.Add([]byte(`{"a":[1,true,null,"x\"]"],"b":{"c":[{"d":"\u00e9"}]}}`))
	f.Add([]byte(`[ -0.5e+3 , "\\" , [ [ ] ] ]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) {
			return
		}
		whole, split, we, se := both(t, data)
		if we != nil {
			return
		}
		if se != nil {
			t.Fatalf("%q: whole accepted, split refused: %v", data, se)
		}
		if !reflect.DeepEqual(whole, split) {
			t.Fatalf("%q:\nwhole %v\nsplit %v", data, whole, split)
		}
	})
}

// DecodeInPlace's strings share the input's memory; Decode's do not, so a
// caller may reuse its buffer after Decode. A document large enough to be
// split decodes the same either way, and its errors carry the same paths.
func TestDecodeInPlace(t *testing.T) {
	readAll := func(d *Decoder, p *Path, out *[]string) {
		if !d.Array(p) {
			return
		}
		for i := 0; d.NextItem(); i++ {
			ip := p.Index(i)
			if !d.Array(&ip) {
				continue
			}
			for d.NextItem() {
				if v, ok := d.String(&ip); ok {
					*out = append(*out, v)
				}
			}
		}
	}
	inside := func(s string, data []byte) bool {
		p, base := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(data)))
		return p >= base && p < base+uintptr(len(data))
	}
	items := make([]string, 20000) // over splitFrom once encoded
	for i := range items {
		items[i] = `["item number ` + strings.Repeat("x", i%7) + `"]`
	}
	items[9] = `[7]`
	data := []byte("[" + strings.Join(items, ",") + "]")
	if len(data) < splitFrom {
		t.Fatalf("test document is %d bytes, under splitFrom", len(data))
	}
	shared, err := DecodeInPlace(data, readAll)
	if err == nil || err.Error() != "[9]: must be a string, got a number" || len(*shared) != len(items)-1 || !inside((*shared)[7], data) {
		t.Fatalf("DecodeInPlace: %d strings, %v; shares the input: %v", len(*shared), err, len(*shared) > 7 && inside((*shared)[7], data))
	}
	copied, err := Decode(data, readAll)
	if err == nil || len(*copied) != len(items)-1 || inside((*copied)[7], data) {
		t.Fatalf("Decode: %d strings, %v", len(*copied), err)
	}
	for i := range *copied {
		if (*copied)[i] != (*shared)[i] {
			t.Fatalf("item %d: %q and %q", i, (*copied)[i], (*shared)[i])
		}
	}
}

// A token stays 16 bytes, with no pointers: at 100,000 categories the
// token slice was the largest thing a load held besides the file itself.
func TestTokenSize(t *testing.T) {
	if n := unsafe.Sizeof(token{}); n != 16 {
		t.Errorf("a token is %d bytes, want 16", n)
	}
}

// splitBefore is split as it was before the scan measured the nesting:
// depthOver over the whole text first, then the syntax, then the scan.
func splitBefore(data []byte, maxDepth int) *Error {
	t := &tokenizer{src: string(data), maxDepth: maxDepth}
	if depthOver(data, maxDepth) {
		return tooDeep(maxDepth)
	}
	if e := validate(data); e != nil {
		return e
	}
	i := skipSpace(t.src, 0)
	if err := t.splitValue(&i, 0); err != nil {
		return errUnrepresentable()
	}
	return nil
}

// split finds what it found when depthOver read the whole text first:
// the same refusal, too deep before anything else, for documents nested
// too deep at every level, with syntax errors before and after, and with
// numbers too large to represent.
func TestSplitRefusesAsBefore(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	docs := []string{
		`{"a":{"b":` + nest(62) + `}}`,
		`{"a":{"b":` + nest(63) + `}}`,
		`{"a":{"b":` + nest(70) + `}}`,
		`{"a":` + nest(64) + `}`,
		`{"a":` + nest(65) + `}`,
		`{"a":{"b":` + nest(70) + `},"c":}`,
		`{"c":,"a":{"b":` + nest(70) + `}}`,
		`{"v":1e999,"a":{"b":` + nest(70) + `}}`,
		`{"v":1e999,"a":{"b":` + nest(10) + `}}`,
		`{"a":{"b":{"c":1e999}}}`,
		`{"a":{"b":"x\\\"]]]]\\\\"}}`,
		`{"a":{"b":"x\\\\\\\"[[[[` + nest(70) + `"}}`,
		`{"a":{"b":"unterminated}}`,
		`{"a":{"b":[1,2}}`,
		`{"a":{"b":` + nest(70) + `}`,
		`[` + nest(70) + `]`,
	}
	for _, doc := range docs {
		data := []byte(doc)
		b := &tokenizer{src: doc, maxDepth: MaxDepth}
		got, want := b.split(data), splitBefore(data, MaxDepth)
		if (got == nil) != (want == nil) || got != nil && got.Reason != want.Reason {
			t.Errorf("%s: split %v, before %v", doc, got, want)
		}
	}
}

// FuzzSplitRefusals: split accepts and refuses what it did before.
func FuzzSplitRefusals(f *testing.F) {
	f.Add([]byte(`{"a":{"b":[[[["x\\\"]"]]]]}}`), 3)
	f.Add([]byte(`{"a":{"b":[[[1e999]]]},"c":[}`), 4)
	f.Fuzz(func(t *testing.T, data []byte, maxDepth int) {
		if !utf8.Valid(data) || maxDepth < 1 || maxDepth > 70 {
			return
		}
		b := &tokenizer{src: string(data), maxDepth: maxDepth}
		got, want := b.split(data), splitBefore(data, maxDepth)
		if (got == nil) != (want == nil) || got != nil && got.Reason != want.Reason {
			t.Fatalf("%q depth %d: split %v, before %v", data, maxDepth, got, want)
		}
	})
}
