package schema

import (
	"bytes"
	"testing"
)

// A Rewrite drops keywords and rewrites references, never the names of
// properties or definitions that happen to spell a keyword; with none,
// WriteJSON writes the tree back as it was read, compacted.
func TestRewrite(t *testing.T) {
	src := `{"$id":"old","type":"object","properties":{"format":{"type":"string","format":"uri"},"x":{"$ref":"a.schema.json#/$defs/y"}},"$defs":{"format":{"type":"string","format":"date"}},"description":"<a & b>"}`
	tree, err := ParseTree([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	WriteJSON(&plain, tree)
	if plain.String() != src {
		t.Errorf("WriteJSON:\n got %s\nwant %s", plain.String(), src)
	}
	r := &Rewrite{
		ID:   "new",
		Drop: func(o *Object, k string) bool { return k == "format" && o.Vals[k] != "date" },
		Ref:  func(ref string) string { return "https://x.invalid/" + ref },
	}
	var got bytes.Buffer
	r.WriteJSON(&got, tree)
	want := `{"$id":"new","type":"object","properties":{"format":{"type":"string"},"x":{"$ref":"https://x.invalid/a.schema.json#/$defs/y"}},"$defs":{"format":{"type":"string","format":"date"}},"description":"<a & b>"}`
	if got.String() != want {
		t.Errorf("Rewrite:\n got %s\nwant %s", got.String(), want)
	}
}
