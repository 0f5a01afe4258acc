package schema

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Examples are a tool's example calls and result, as compact JSON.
type Examples struct {
	Arguments []string // calls the input schema accepts; at least one
	Invalid   string   // a call it refuses; optional
	Result    string   // a structured result the output schema accepts
}

// parseExamples reads a tool file's "examples":
//
//	"examples": {
//	  "arguments": [{...}, ...],  // calls the input schema accepts (one at least)
//	  "invalid": {...},           // optional: a call it refuses
//	  "result": {...}             // a structured result the output schema accepts
//	}
//
// Here only their shape is checked; the generator (internal/schemagen)
// checks each against the schema it claims to fit, which needs a schema
// validator this package, linked into the 3gs binary, does without.
func parseExamples(v any) (Examples, error) {
	var ex Examples
	o, ok := v.(*Object)
	if !ok {
		return ex, errors.New(`"examples" must be an object with "arguments" (a list of argument objects), "result" (an output object) and optionally "invalid" (arguments the schema refuses)`)
	}
	for _, k := range o.Keys {
		if k != "arguments" && k != "invalid" && k != "result" {
			return ex, fmt.Errorf("examples: unknown key %q; examples has arguments, result and optionally invalid", k)
		}
	}
	list, ok := o.Vals["arguments"].([]any)
	if !ok || len(list) == 0 {
		return ex, errors.New(`examples.arguments must be a list of at least one argument object`)
	}
	for i, a := range list {
		text, err := compactObject(a)
		if err != nil {
			return ex, fmt.Errorf("examples.arguments[%d] %w", i, err)
		}
		ex.Arguments = append(ex.Arguments, text)
	}
	if bad, ok := o.Vals["invalid"]; ok {
		var err error
		if ex.Invalid, err = compactObject(bad); err != nil {
			return ex, fmt.Errorf("examples.invalid %w", err)
		}
	}
	res, ok := o.Vals["result"]
	if !ok {
		return ex, errors.New(`examples.result is missing: give a structured result the outputSchema accepts`)
	}
	var err error
	if ex.Result, err = compactObject(res); err != nil {
		return ex, fmt.Errorf("examples.result %w", err)
	}
	return ex, nil
}

// compactObject writes a JSON object as compact JSON, keys in file order.
func compactObject(v any) (string, error) {
	if _, ok := v.(*Object); !ok {
		return "", errors.New("must be a JSON object")
	}
	var b bytes.Buffer
	WriteJSON(&b, v)
	return strings.TrimSpace(b.String()), nil
}
