package schema

import "testing"

// tools/list carries an output schema without its prose, bounds and closed
// objects (issue 48), at every depth, but keeps names, types, required,
// enums, formats, references and a map's value schema.
func TestLeanOutput(t *testing.T) {
	full := `{"type":"object","additionalProperties":false,"required":["description","items"],"properties":{` +
		`"description":{"description":"A property named description.","type":"string","maxLength":20,"examples":["x"]},` +
		`"items":{"title":"Items","type":"array","minItems":1,"maxItems":3,"items":{"$ref":"#/$defs/item"}},` +
		`"counts":{"type":"object","additionalProperties":{"type":"integer","minimum":0}}},` +
		`"$defs":{"item":{"description":"One item.","type":"object","additionalProperties":false,"properties":{` +
		`"when":{"type":"string","format":"date-time","pattern":"^2"},"kind":{"type":"string","enum":["a","b"],"$comment":"c"}}}}}`
	want := `{"type":"object","required":["description","items"],"properties":{` +
		`"description":{"type":"string"},` +
		`"items":{"type":"array","items":{"$ref":"#/$defs/item"}},` +
		`"counts":{"type":"object","additionalProperties":{"type":"integer"}}},` +
		`"$defs":{"item":{"type":"object","properties":{` +
		`"when":{"type":"string","format":"date-time"},"kind":{"type":"string","enum":["a","b"]}}}}}`
	got, err := leanOutput([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("leanOutput:\n got %s\nwant %s", got, want)
	}
}

// An input schema keeps everything but its shared definitions' own notes:
// the properties that use them keep their descriptions and bounds.
func TestLeanInput(t *testing.T) {
	full := `{"type":"object","additionalProperties":false,"properties":{"action":{"description":"What to do.","$ref":"#/$defs/action"},` +
		`"reason":{"description":"Why.","type":"string","maxLength":10}},"$defs":{"action":{"title":"Action","description":"Shared here so the values are listed once.","type":"string","enum":["add","remove"]}}}`
	want := `{"type":"object","additionalProperties":false,"properties":{"action":{"description":"What to do.","$ref":"#/$defs/action"},` +
		`"reason":{"description":"Why.","type":"string","maxLength":10}},"$defs":{"action":{"type":"string","enum":["add","remove"]}}}`
	got, err := leanInput([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("leanInput:\n got %s\nwant %s", got, want)
	}
}
