package strictjson

import (
	"strings"
	"testing"
)

// A syntax error in a file is told by line and column, with the text
// there, instead of a byte offset to count to.
func TestWithPosition(t *testing.T) {
	for _, c := range []struct {
		doc, want string
	}{
		{"{\n  \"a\": 1,,\n  \"b\": 2\n}", `at line 2, column 10 (byte 11), near "\"a\": 1,,"`},
		{"{\n  \"é\": [1 2]\n}", `at line 2, column 11 (byte 13), near "\"é\": [1 2]"`},
		{"[1,\n2,\n", "unexpected end of input"},
	} {
		_, err := Decode([]byte(c.doc), func(*Decoder, *Path, *struct{}) {})
		if err == nil {
			t.Fatalf("%q decoded", c.doc)
		}
		got := WithPosition(err, []byte(c.doc)).Error()
		if !strings.Contains(got, c.want) {
			t.Errorf("%q: %s, want %s", c.doc, got, c.want)
		}
	}
	plain := &Error{Path: "x", Reason: "must be a string"}
	if got := WithPosition(plain, []byte("{}")); got.Error() != plain.Error() {
		t.Errorf("an error with no place changed: %v", got)
	}
}
