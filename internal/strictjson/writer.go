package strictjson

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// Writer builds indented JSON for the generated encoders, which write each
// object's keys in schema order: a file 3gs writes back (registry.json after
// an admin change) keeps the order its curator reads, so a change shows as
// a small diff.
type Writer struct {
	buf   []byte
	depth int
	empty []bool // per open container: nothing written in it yet
}

// Bytes returns the document with a final newline.
func (w *Writer) Bytes() []byte { return append(w.buf, '\n') }

func (w *Writer) newline() {
	w.buf = append(w.buf, '\n')
	for range w.depth {
		w.buf = append(w.buf, ' ', ' ')
	}
}

// member starts a value inside the current container.
func (w *Writer) member() {
	if n := len(w.empty); n > 0 {
		if !w.empty[n-1] {
			w.buf = append(w.buf, ',')
		}
		w.empty[n-1] = false
		w.newline()
	}
}

func (w *Writer) open(c byte) {
	w.buf = append(w.buf, c)
	w.depth++
	w.empty = append(w.empty, true)
}

func (w *Writer) close(c byte) {
	w.depth--
	if !w.empty[len(w.empty)-1] {
		w.newline()
	}
	w.empty = w.empty[:len(w.empty)-1]
	w.buf = append(w.buf, c)
}

// BeginObject, EndObject, BeginArray and EndArray delimit containers.
func (w *Writer) BeginObject() { w.open('{') }
func (w *Writer) EndObject()   { w.close('}') }
func (w *Writer) BeginArray()  { w.open('[') }
func (w *Writer) EndArray()    { w.close(']') }

// Key writes an object member's key; its value follows.
func (w *Writer) Key(k string) {
	w.member()
	w.buf = appendQuoted(w.buf, k)
	w.buf = append(w.buf, ':', ' ')
}

// Item starts an array element; its value follows.
func (w *Writer) Item() { w.member() }

// String, Int, Float and Bool write scalar values.
func (w *Writer) String(s string) { w.buf = appendQuoted(w.buf, s) }
func (w *Writer) Int(v int)       { w.buf = strconv.AppendInt(w.buf, int64(v), 10) }
func (w *Writer) Bool(v bool)     { w.buf = strconv.AppendBool(w.buf, v) }
func (w *Writer) Float(v float64) { w.buf = strconv.AppendFloat(w.buf, v, 'g', -1, 64) }

// SortedKeys returns a map's keys in order, so maps are written the same
// way every time.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendQuoted writes s as a JSON string. Unlike encoding/json it leaves
// <, > and & alone, as a person writing the file would.
func appendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029': // valid JSON, but not valid JavaScript
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
