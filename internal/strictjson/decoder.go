package strictjson

import (
	"math"
	"math/bits"
	"strings"
)

// Decoder walks one tokenized document. Each read method consumes exactly
// one value, whether or not it is of the wanted type, so a decoder that
// finds a problem records it and carries on: one pass reports every problem.
type Decoder struct {
	toks []token
	nums []uint64 // the tokenizer's numbers, by token.aux
	pos  int
	errs Errors
	tz   *tokenizer
	// outer holds the documents being read while a lazy value (kindLazy)
	// is: its tokens replace toks until they are all read.
	outer []frame
}

// frame is where reading resumes once a lazy value is read.
type frame struct {
	toks []token
	nums []uint64
	pos  int
	tz   *tokenizer
}

// cur is the token at the reading position, after leaving every lazy
// value that has been read to its end.
func (d *Decoder) cur() *token {
	for d.pos == len(d.toks) && len(d.outer) > 0 {
		d.tz.release()
		f := d.outer[len(d.outer)-1]
		d.outer = d.outer[:len(d.outer)-1]
		d.toks, d.nums, d.pos, d.tz = f.toks, f.nums, f.pos, f.tz
	}
	return &d.toks[d.pos]
}

// enter tokenizes the lazy value at the reading position and reads on in
// its tokens. A value that cannot be tokenized (a number too large for a
// float) is recorded at p and skipped; enter then returns false.
func (d *Decoder) enter(p *Path, t *token) bool {
	sub, err := d.tz.expand(t)
	if err != nil {
		d.Fail(p, err.Reason)
		d.pos++
		return false
	}
	d.outer = append(d.outer, frame{toks: d.toks, nums: d.nums, pos: d.pos + 1, tz: d.tz})
	d.toks, d.nums, d.pos, d.tz = sub.toks, sub.nums, 0, sub
	return true
}

// NewDecoder tokenizes data. A document that is not well-formed UTF-8 JSON,
// or nests deeper than MaxDepth, yields an error and no decoder. Call
// Finish when done.
func NewDecoder(data []byte) (*Decoder, error) {
	return newDecoder(data, false)
}

func newDecoder(data []byte, inPlace bool) (*Decoder, error) {
	tz, err := tokenized(data, inPlace)
	if err != nil {
		return nil, err
	}
	return &Decoder{toks: tz.toks, nums: tz.nums, tz: tz}, nil
}

// tokenized is a pooled tokenizer holding data's tokens.
func tokenized(data []byte, inPlace bool) (*tokenizer, error) {
	tz := tokenizers.Get().(*tokenizer)
	if err := tz.tokenize(data, MaxDepth, inPlace); err != nil {
		tz.release()
		return nil, Errors{err}
	}
	return tz, nil
}

// Finish returns the problems recorded, as Errors, or nil, and recycles the
// decoder's buffers; the decoder must not be used afterwards.
func (d *Decoder) Finish() error {
	for _, f := range d.outer {
		d.tz.release()
		d.tz = f.tz
	}
	d.outer = nil
	d.tz.release()
	d.toks, d.nums, d.tz = nil, nil, nil
	if len(d.errs) == 0 {
		return nil
	}
	return d.errs
}

// Fail records a problem at p.
func (d *Decoder) Fail(p *Path, reason string) {
	if len(d.errs) <= MaxErrors {
		d.record(&Error{Path: p.String(), Reason: reason})
	}
}

// record appends a problem, or the note that there are too many once
// MaxErrors are recorded.
func (d *Decoder) record(e *Error) {
	switch {
	case len(d.errs) < MaxErrors:
		d.errs = append(d.errs, e)
	case len(d.errs) == MaxErrors:
		d.errs = append(d.errs, &Error{Reason: "too many errors; fix the ones above and try again"})
	}
}

// skip steps over the value at the current position.
func (d *Decoder) skip() {
	t := d.cur()
	if t.kind == kindObject || t.kind == kindArray {
		d.pos = int(t.aux) + 1
		return
	}
	d.pos++
}

// int and float are the value of a number token.
func (d *Decoder) int(t *token) int64     { return int64(d.nums[t.aux]) }
func (d *Decoder) float(t *token) float64 { return math.Float64frombits(d.nums[t.aux]) }

// describe names a token's JSON type for "must be X, got Y" messages.
func describe(t *token) string {
	switch t.kind {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindString:
		return "a string"
	case kindNumber:
		return "a number"
	case kindObject:
		return "an object"
	case kindArray:
		return "an array"
	}
	return "nothing"
}

// expect consumes a value and reports whether it has kind k; a value of any
// other kind (null included) is recorded as a type error and skipped.
func (d *Decoder) expect(p *Path, k kind, want string) (*token, bool) {
	t := d.cur()
	if t.kind == kindLazy {
		if !d.enter(p, t) {
			return nil, false
		}
		t = d.cur()
	}
	if t.kind != k {
		d.Fail(p, "must be "+want+", got "+describe(t))
		d.skip()
		return nil, false
	}
	d.pos++
	return t, true
}

// Object enters an object value. It returns false, having recorded the type
// error and skipped the value, when the value is not an object.
func (d *Decoder) Object(p *Path) bool {
	_, ok := d.expect(p, kindObject, "an object")
	return ok
}

// NextKey returns the next member key of the object being read, or false
// after consuming the end of the object.
func (d *Decoder) NextKey() (string, bool) {
	t := d.cur()
	d.pos++
	if t.kind == kindEnd {
		return "", false
	}
	return d.tz.str(t), true
}

// Array enters an array value, as Object does for objects.
func (d *Decoder) Array(p *Path) bool {
	_, ok := d.expect(p, kindArray, "an array")
	return ok
}

// NextItem reports whether another element follows in the array being read;
// it consumes the end of the array when none does.
func (d *Decoder) NextItem() bool {
	if d.cur().kind == kindEnd {
		d.pos++
		return false
	}
	return true
}

// String reads a string value. Strings holding NUL characters are refused:
// no field of ours has a use for them, and they truncate text in C-based
// tools downstream.
func (d *Decoder) String(p *Path) (string, bool) {
	t, ok := d.expect(p, kindString, "a string")
	if !ok {
		return "", false
	}
	s := d.tz.str(t)
	if strings.IndexByte(s, 0) >= 0 {
		d.Fail(p, "must not contain NUL characters")
		return "", false
	}
	return s, true
}

// Bool reads a boolean value.
func (d *Decoder) Bool(p *Path) (bool, bool) {
	t, ok := d.expect(p, kindBool, "a boolean")
	if !ok {
		return false, false
	}
	return t.aux == 1, true
}

// Float reads a number value.
func (d *Decoder) Float(p *Path) (float64, bool) {
	t, ok := d.expect(p, kindNumber, "a number")
	if !ok {
		return 0, false
	}
	if t.isInt {
		return float64(d.int(t)), true
	}
	return d.float(t), true
}

// Int reads an integer value. As in JSON Schema, a number with a zero
// fraction (2.0, 1e2) is an integer; 1.5 is not.
func (d *Decoder) Int(p *Path) (int, bool) {
	t, ok := d.expect(p, kindNumber, "an integer")
	if !ok {
		return 0, false
	}
	if t.isInt {
		i := d.int(t)
		if i < math.MinInt || i > math.MaxInt {
			d.Fail(p, "integer out of range")
			return 0, false
		}
		return int(i), true
	}
	f := d.float(t)
	if f != math.Trunc(f) || math.IsInf(f, 0) {
		d.Fail(p, "must be an integer, got "+briefNumber(d.tz.str(t)))
		return 0, false
	}
	if f < math.MinInt64 || f >= math.MaxInt64 {
		d.Fail(p, "integer out of range")
		return 0, false
	}
	return int(f), true
}

// Claim marks the known field with index bit as seen. A second occurrence of
// the same key is a duplicate: it is recorded and its value skipped, and
// Claim returns false.
func (d *Decoder) Claim(p *Path, key string, seen *uint64, bit uint) bool {
	if *seen&(1<<bit) != 0 {
		kp := p.Key(key)
		d.Fail(&kp, "duplicate key")
		d.skip()
		return false
	}
	*seen |= 1 << bit
	return true
}

// DuplicateKey records a repeated key of a map-like object and skips its value.
func (d *Decoder) DuplicateKey(p *Path, key string) {
	kp := p.Key(key)
	d.Fail(&kp, "duplicate key")
	d.skip()
}

// UnknownKey records a key the schema does not allow and skips its value.
// A key that matches a known one except for case gets its own message,
// because such keys are how case-insensitive decoders get fooled.
func (d *Decoder) UnknownKey(p *Path, key string, known []string) {
	kp := p.Key(key)
	reason := "unknown field"
	for _, k := range known {
		if strings.EqualFold(k, key) {
			reason = "unknown field; field names are case-sensitive, did you mean " + brief(k) + "?"
			break
		}
	}
	if len(known) == 0 {
		reason += "; this object takes no fields"
	} else if !strings.Contains(reason, "did you mean") {
		reason += "; allowed: " + strings.Join(known, ", ")
	}
	d.Fail(&kp, reason)
	d.skip()
}

// Missing records every required field (bit i of required names known[i])
// that the object at p did not contain.
func (d *Decoder) Missing(p *Path, seen, required uint64, known []string) {
	for m := required &^ seen; m != 0; m &= m - 1 {
		kp := p.Key(known[bits.TrailingZeros64(m)])
		d.Fail(&kp, "required field is missing")
	}
}

// Decode runs a generated decoder over data: the one body every generated
// DecodeT shares. On failure the error is an Errors listing every problem
// with its path, and the value returned holds whatever could be decoded,
// so callers can run further checks and report everything at once.
func Decode[T any](data []byte, decode func(d *Decoder, p *Path, out *T)) (*T, error) {
	return decodeWith(data, false, decode)
}

// DecodeInPlace is Decode for bytes the caller keeps, unchanged, for as
// long as the value decoded is used: its strings point into data rather
// than into a copy of it. The registry is decoded so. It keeps its file's
// exact bytes anyway, and at 100,000 categories a copy would hold another
// 150 MB for as long as the registry is served. Anything that may reuse
// or change its buffer afterwards, such as a request being read, must use
// Decode.
func DecodeInPlace[T any](data []byte, decode func(d *Decoder, p *Path, out *T)) (*T, error) {
	return decodeWith(data, true, decode)
}

func decodeWith[T any](data []byte, inPlace bool, decode func(d *Decoder, p *Path, out *T)) (*T, error) {
	tz, err := tokenized(data, inPlace)
	if err != nil {
		return nil, err
	}
	// A Decoder of its own: a pool of them saved 0.5% of the bytes per
	// request on the benchmark mix (mcp BenchmarkHandle/mix-v1, 25760
	// against 25900 B/op), under the 5% a pool must earn.
	d := &Decoder{toks: tz.toks, nums: tz.nums, tz: tz}
	var out T
	decode(d, nil, &out)
	err = d.Finish()
	return &out, err
}

// Items is the number of elements of the array Array has just entered,
// or max if there are more: the room a decoder makes for them.
func (d *Decoder) Items(max int) int {
	n := 0
	for pos := d.pos; n < max && d.toks[pos].kind != kindEnd; pos = d.after(pos) {
		n++
	}
	return n
}
