package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Object is a JSON object that remembers its key order, so generated code
// and the manifest follow the order the schema author wrote.
type Object struct {
	Keys []string
	Vals map[string]any
}

func (o *Object) get(key string) (any, bool) {
	v, ok := o.Vals[key]
	return v, ok
}

// ParseTree reads one JSON document into objects, []any, string,
// json.Number, bool and nil. Duplicate keys are an error: a schema with two
// "pattern" keys is ambiguous, and decoders disagree on which one wins.
func ParseTree(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, "")
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the top-level value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder, ptr string) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", orRoot(ptr), err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &Object{Vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("%s: %w", orRoot(ptr), err)
				}
				k := kt.(string)
				if _, dup := o.Vals[k]; dup {
					return nil, fmt.Errorf("%s: duplicate key %q", orRoot(ptr), k)
				}
				v, err := parseValue(dec, ptr+"/"+k)
				if err != nil {
					return nil, err
				}
				o.Keys = append(o.Keys, k)
				o.Vals[k] = v
			}
			_, err := dec.Token()
			return o, err
		case '[':
			var a []any
			for i := 0; dec.More(); i++ {
				v, err := parseValue(dec, fmt.Sprintf("%s/%d", ptr, i))
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
	}
	return tok, nil
}

func orRoot(ptr string) string {
	if ptr == "" {
		return "#"
	}
	return "#" + ptr
}

// WriteJSON writes a tree as compact JSON, keys in their original order.
func WriteJSON(b *bytes.Buffer, v any) { (*Rewrite)(nil).write(b, v, true, false) }

// Rewrite changes what WriteJSON writes of a schema tree, keyword by
// keyword: what the type generator is shown of a schema is the schema
// written this way. The zero Rewrite, or nil, changes nothing.
type Rewrite struct {
	// ID, when set, is the root's "$id", written first in place of any
	// the root has.
	ID string
	// Drop reports whether keyword k of schema o is left out. The names
	// of "properties" and "$defs" are names, not keywords: never dropped.
	Drop func(o *Object, k string) bool
	// Ref, when set, is the value written for a "$ref" keyword's ref.
	Ref func(ref string) string
}

// WriteJSON writes tree as the package's WriteJSON does, with r's
// changes.
func (r *Rewrite) WriteJSON(b *bytes.Buffer, tree any) { r.write(b, tree, true, false) }

// write writes v; root is set for the tree's root, names when v's keys
// are names (those of "properties" or "$defs") rather than keywords.
func (r *Rewrite) write(b *bytes.Buffer, v any, root, names bool) {
	switch t := v.(type) {
	case *Object:
		b.WriteByte('{')
		first := true
		member := func(k string) {
			if !first {
				b.WriteByte(',')
			}
			first = false
			r.write(b, k, false, false)
			b.WriteByte(':')
		}
		id := r != nil && root && r.ID != ""
		if id {
			member("$id")
			r.write(b, r.ID, false, false)
		}
		for _, k := range t.Keys {
			keyword := r != nil && !names
			if keyword && (id && k == "$id" || r.Drop != nil && r.Drop(t, k)) {
				continue
			}
			member(k)
			val := t.Vals[k]
			if ref, ok := val.(string); ok && keyword && k == "$ref" && r.Ref != nil {
				val = r.Ref(ref)
			}
			r.write(b, val, false, keyword && (k == "properties" || k == "$defs"))
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			r.write(b, e, false, false)
		}
		b.WriteByte(']')
	default:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false) // as json.Compact leaves the file's text
		_ = enc.Encode(t)
		b.Truncate(b.Len() - 1) // Encode's newline
	}
}
