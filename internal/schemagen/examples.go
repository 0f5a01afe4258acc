package schemagen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/three-good-sources/3gs/internal/schema"
)

// checkExamples holds each of a tool's examples to the schema it claims to
// fit, self-contained as tools/list carries it (references inlined) and
// with nothing left out, so an example can never drift from its schema.
// Tests call every tool with its first example, so a new tool is exercised
// by the whole suite without any test naming it.
func checkExamples(t *schema.Tool) error {
	input, err := compileSchema("inputSchema", t.InputSchema)
	if err != nil {
		return err
	}
	output, err := compileSchema("outputSchema", t.OutputSchema)
	if err != nil {
		return err
	}
	for i, a := range t.Examples.Arguments {
		if err := validate(input, a, true); err != nil {
			return fmt.Errorf("%s: examples.arguments[%d] does not fit inputSchema: %w", t.File, i, err)
		}
	}
	if t.Examples.Invalid != "" {
		if err := validate(input, t.Examples.Invalid, false); err != nil {
			return fmt.Errorf("%s: examples.invalid: %w", t.File, err)
		}
	}
	if err := validate(output, t.Examples.Result, true); err != nil {
		return fmt.Errorf("%s: examples.result does not fit outputSchema: %w", t.File, err)
	}
	return nil
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

// validate checks one example; valid says whether the schema must accept
// it or refuse it.
func validate(s *jsonschema.Schema, text string, valid bool) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return err
	}
	err = s.Validate(inst)
	switch {
	case valid && err != nil:
		return errors.New(strings.Join(strings.Fields(err.Error()), " "))
	case !valid && err == nil:
		return errors.New("the inputSchema accepts it; an invalid example must break the schema")
	}
	return nil
}
