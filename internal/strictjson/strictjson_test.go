package strictjson

import (
	"strings"
	"testing"

	"github.com/bytedance/sonic"
)

// sonic silently falls back to encoding/json on platforms or Go versions its
// JIT does not support (see its compat.go build tags). The fallback works
// but is several times slower, and its ast package prints a warning; this
// test makes such a fallback a visible failure instead.
func TestSonicUsesJIT(t *testing.T) {
	if sonic.APIKind != sonic.UseSonicJSON {
		t.Fatalf("sonic runs its compatibility build (APIKind=%d); check the Go version against sonic's supported range and upgrade sonic", sonic.APIKind)
	}
}

func TestPathString(t *testing.T) {
	var root *Path
	a := root.Key("categories")
	b := a.Key("rust-learning")
	c := b.Key("sources")
	d := c.Index(1)
	e := d.Key("rank")
	if got := e.String(); got != "categories.rust-learning.sources[1].rank" {
		t.Errorf("got %q", got)
	}
	q := a.Key("a.b \"c\"\n")
	if got := q.String(); got != `categories["a.b \"c\"\n"]` {
		t.Errorf("got %q", got)
	}
	i := root.Index(3)
	if got := i.String(); got != "[3]" {
		t.Errorf("got %q", got)
	}
	if got := root.String(); got != "" {
		t.Errorf("root renders as %q", got)
	}
}

func decodeErr(t *testing.T, in string) string {
	t.Helper()
	_, err := NewDecoder([]byte(in))
	if err == nil {
		t.Fatalf("%.30q accepted", in)
	}
	return err.Error()
}

func TestTokenizeRefuses(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "invalid JSON: unexpected end of input"},
		{"  ", "invalid JSON: unexpected end of input"},
		{`{"a":1}{}`, "invalid JSON: syntax error at byte 7"},
		{`[1,]`, "invalid JSON: syntax error at byte 3"},
		{"\"\xc3\x28\"", "invalid UTF-8 at byte 1"},
		{strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), "nesting deeper than 64 levels"},
		{strings.Repeat(`{"a":`, 100000), "nesting deeper than 64 levels"},
		{`1e400`, "invalid JSON: a value cannot be represented (numbers must fit a 64-bit float)"},
	}
	for _, c := range cases {
		if got := decodeErr(t, c.in); got != c.want {
			t.Errorf("%.30q: got %q, want %q", c.in, got, c.want)
		}
	}
	// The deepest accepted nesting.
	if _, err := NewDecoder([]byte(strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth))); err != nil {
		t.Errorf("depth %d refused: %v", MaxDepth, err)
	}
}

func TestErrorsAreBounded(t *testing.T) {
	d, err := NewDecoder([]byte(`[` + strings.Repeat(`1,`, 500) + `1]`))
	if err != nil {
		t.Fatal(err)
	}
	d.Array(nil)
	for i := 0; d.NextItem(); i++ {
		p := (*Path)(nil).Index(i)
		d.String(&p)
	}
	err = d.Finish()
	errs := err.(Errors)
	if len(errs) != MaxErrors+1 || !strings.HasPrefix(errs[MaxErrors].Reason, "too many errors") {
		t.Errorf("got %d errors, last %v", len(errs), errs[len(errs)-1])
	}
	if got := err.Error(); got != "[0]: must be a string, got a number (and 100 more)" {
		t.Errorf("summary %q", got)
	}
}

func TestIntegerForms(t *testing.T) {
	cases := []struct {
		in   string
		want int
		err  string
	}{
		{"3", 3, ""},
		{"3.0", 3, ""},
		{"1e2", 100, ""},
		{"-0", 0, ""},
		{"2.5", 0, "must be an integer, got 2.5"},
		{"1e300", 0, "integer out of range"},
		{"9007199254740993", 9007199254740993, ""},
	}
	for _, c := range cases {
		d, err := NewDecoder([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		v, ok := d.Int(nil)
		err = d.Finish()
		if c.err == "" && (!ok || v != c.want || err != nil) {
			t.Errorf("%s: got %d, %v", c.in, v, err)
		}
		if c.err != "" && (ok || err == nil || err.Error() != c.err) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.err)
		}
	}
}

func TestFormatDateTime(t *testing.T) {
	for s, ok := range map[string]bool{
		"2026-11-21T09:30:00Z":        true,
		"2026-11-21T09:30:00.123456Z": true,
		"2026-11-21T09:30:00+01:00":   true,
		"2026-11-21":                  false,
		"2026-11-21T09:30:00":         false, // no time zone
		"2026-11-21t09:30:00z":        false,
		"2026-02-30T09:30:00Z":        false,
		"2026-11-21 09:30:00Z":        false,
		"":                            false,
	} {
		d, err := NewDecoder([]byte(`""`))
		if err != nil {
			t.Fatal(err)
		}
		d.FormatDateTime(nil, s)
		if got := d.Finish() == nil; got != ok {
			t.Errorf("FormatDateTime(%q) accepted=%v, want %v", s, got, ok)
		}
	}
}

func TestOneOf(t *testing.T) {
	two := &OneOf{Sets: []uint64{0b01, 0b10}, Want: "exactly one of query or slug", Names: []string{"query", "slug"}, Help: "query searches; slug names"}
	three := &OneOf{Sets: []uint64{0b001, 0b110, 0b1000}, Want: "exactly one of a, both b and c or d", Names: []string{"a", "both b and c", "d"}}
	cases := []struct {
		rule *OneOf
		seen uint64
		want string
	}{
		{two, 0b01, ""},
		{two, 0b10, ""},
		{two, 0b100, "needs exactly one of query or slug, got neither: query searches; slug names"},
		{two, 0b11, "needs exactly one of query or slug, got both: query searches; slug names"},
		{three, 0b0110, ""},
		{three, 0b0100, "needs exactly one of a, both b and c or d, got none of them"}, // half a branch holds nothing
		{three, 0b0111, "needs exactly one of a, both b and c or d, got a, both b and c"},
		{three, 0b1111, "needs exactly one of a, both b and c or d, got a, both b and c, d"},
	}
	for _, c := range cases {
		d, err := NewDecoder([]byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		d.OneOf(nil, c.seen, c.rule)
		got := ""
		if err := d.Finish(); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("seen %b: got %q, want %q", c.seen, got, c.want)
		}
	}
}
