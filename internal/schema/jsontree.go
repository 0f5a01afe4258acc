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
