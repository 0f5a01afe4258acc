package schemagen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// parseExamples reads a tool file's "examples":
//
//	"examples": {
//	  "arguments": [{...}, ...],  // calls the input schema accepts (one at least)
//	  "invalid": {...},           // optional: a call it refuses
//	  "result": {...}             // a structured result the output schema accepts
//	}
//
// Each is checked against the schema it claims to fit, as the tools/list
// entry carries it (references inlined), so an example can never drift
// from its schema. Tests call every tool with its first example, so a new
// tool is exercised by the whole suite without any test naming it.
func parseExamples(v any, manifest []byte) (Examples, error) {
	var ex Examples
	o, ok := v.(*object)
	if !ok {
		return ex, errors.New(`"examples" must be an object with "arguments" (a list of argument objects), "result" (an output object) and optionally "invalid" (arguments the schema refuses)`)
	}
	for _, k := range o.keys {
		if k != "arguments" && k != "invalid" && k != "result" {
			return ex, fmt.Errorf("examples: unknown key %q; examples has arguments, result and optionally invalid", k)
		}
	}
	var entry struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(manifest, &entry); err != nil {
		return ex, err
	}
	input, err := compileSchema("inputSchema", entry.InputSchema)
	if err != nil {
		return ex, err
	}
	output, err := compileSchema("outputSchema", entry.OutputSchema)
	if err != nil {
		return ex, err
	}
	list, ok := o.vals["arguments"].([]any)
	if !ok || len(list) == 0 {
		return ex, errors.New(`examples.arguments must be a list of at least one argument object`)
	}
	for i, a := range list {
		text, err := checkExample(input, a, true)
		if err != nil {
			return ex, fmt.Errorf("examples.arguments[%d] does not fit inputSchema: %w", i, err)
		}
		ex.Arguments = append(ex.Arguments, text)
	}
	if bad, ok := o.vals["invalid"]; ok {
		if ex.Invalid, err = checkExample(input, bad, false); err != nil {
			return ex, fmt.Errorf("examples.invalid: %w", err)
		}
	}
	res, ok := o.vals["result"]
	if !ok {
		return ex, errors.New(`examples.result is missing: give a structured result the outputSchema accepts`)
	}
	if ex.Result, err = checkExample(output, res, true); err != nil {
		return ex, fmt.Errorf("examples.result does not fit outputSchema: %w", err)
	}
	return ex, nil
}

// compileSchema compiles one self-contained schema of a manifest entry.
func compileSchema(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	url := "urn:3gs:example:" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c.Compile(url)
}

// checkExample validates one example and returns it as compact JSON.
// valid says whether the schema must accept it or refuse it.
func checkExample(s *jsonschema.Schema, v any, valid bool) (string, error) {
	if _, isObject := v.(*object); !isObject {
		return "", errors.New("must be a JSON object")
	}
	var b bytes.Buffer
	writeJSON(&b, v)
	text := strings.TrimSpace(b.String())
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return "", err
	}
	err = s.Validate(inst)
	switch {
	case valid && err != nil:
		return "", errors.New(oneLine(err))
	case !valid && err == nil:
		return "", errors.New("the inputSchema accepts it; an invalid example must break the schema")
	}
	return text, nil
}

// oneLine flattens a validation error to one line for the generator's
// message.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
