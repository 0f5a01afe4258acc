package tooltable

import (
	"errors"
	"math"
	"strconv"

	"github.com/three-good-sources/3gs/internal/jsonrpc"
)

// Output is what every generated tool output type is: its AppendJSON
// (gen/tools_output_encode_gen.go) appends it as compact JSON, byte for
// byte what encoding/json's rules and sonic write for the struct: members
// in field order, those tagged omitempty left out when empty, nil lists
// and pointers as null, floats as jsonrpc.AppendFloat and strings as
// jsonrpc.AppendString write them. On error (a float that is NaN or
// infinite) it returns dst unchanged.
type Output interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// AppendOutput appends v as JSON to dst: null for a nil v, which is what
// a tool error without structured content carries.
func AppendOutput(dst []byte, v Output) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	return v.AppendJSON(dst)
}

// ErrNotFinite is the error of a float that JSON cannot write.
var ErrNotFinite = errors.New("json: unsupported value: a number is NaN or infinite")

// Writer is the compact JSON writer the generated output encoders write
// through. It keeps no state but the buffer and the first error: a value
// goes after a comma unless it opens its container, which the last byte
// written says (a complete value never ends with { or [).
type Writer struct {
	Buf []byte
	Err error
}

// member starts a value inside the current container.
func (w *Writer) member() {
	if n := len(w.Buf); n > 0 && w.Buf[n-1] != '{' && w.Buf[n-1] != '[' {
		w.Buf = append(w.Buf, ',')
	}
}

// BeginObject, EndObject, BeginArray and EndArray delimit containers.
func (w *Writer) BeginObject() { w.Buf = append(w.Buf, '{') }
func (w *Writer) EndObject()   { w.Buf = append(w.Buf, '}') }
func (w *Writer) BeginArray()  { w.Buf = append(w.Buf, '[') }
func (w *Writer) EndArray()    { w.Buf = append(w.Buf, ']') }

// Key writes an object member's key; its value follows.
func (w *Writer) Key(k string) {
	w.member()
	w.Buf = jsonrpc.AppendString(w.Buf, k)
	w.Buf = append(w.Buf, ':')
}

// Field writes an object member's key given quoted, with its colon, as
// the generated encoders have it from the schema: "name":. Its value
// follows.
func (w *Writer) Field(quotedKey string) {
	w.member()
	w.Buf = append(w.Buf, quotedKey...)
}

// Item starts an array element; its value follows.
func (w *Writer) Item() { w.member() }

// String, Int, Bool, Float and Null write scalar values.
func (w *Writer) String(s string) { w.Buf = jsonrpc.AppendString(w.Buf, s) }
func (w *Writer) Int(v int)       { w.Buf = strconv.AppendInt(w.Buf, int64(v), 10) }
func (w *Writer) Bool(v bool)     { w.Buf = strconv.AppendBool(w.Buf, v) }
func (w *Writer) Null()           { w.Buf = append(w.Buf, "null"...) }

// Float writes v, or records ErrNotFinite (and writes null in its place,
// which Finish drops) when v is NaN or infinite.
func (w *Writer) Float(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if w.Err == nil {
			w.Err = ErrNotFinite
		}
		w.Null()
		return
	}
	w.Buf = jsonrpc.AppendFloat(w.Buf, v)
}

// Finish returns what was written after dst's first start bytes, or, on
// error, dst cut back to them.
func (w *Writer) Finish(start int) ([]byte, error) {
	if w.Err != nil {
		return w.Buf[:start], w.Err
	}
	return w.Buf, nil
}
