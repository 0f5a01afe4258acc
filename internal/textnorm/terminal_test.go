package textnorm

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTerminal(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, 100%", "plain text, 100%"},
		{"café ☕", "café ☕"},
		{"\x1b[2Jcleared", `\x1b[2Jcleared`},
		{"\x1b]0;title\a", `\x1b]0;title\x07`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"a\x7fb", `a\x7fb`},
		{"C1 \u009b2J", `C1 \x9b2J`},
		{"not UTF-8 \x9b2J", `not UTF-8 \x9b2J`},
		{"moc.elpmaxe\u202e", `moc.elpmaxe\u202e`},
		{"\u2066isolate\u2069 \u200e\u200f\u061c", `\u2066isolate\u2069 \u200e\u200f\u061c`},
		{"zero\u200bwidth\ufeff", `zero\u200bwidth\ufeff`},
		{"tag\U000E0041\U000E007F", `tag\U000e0041\U000e007f`},
		{"two\nlines\r\tx", `two\x0alines\x0d\x09x`},
		{"line\u2028sep", `line\u2028sep`},
	} {
		if got := Terminal(c.in); got != c.want {
			t.Errorf("Terminal(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTerminalLinesKeepsLineFeedsOnly(t *testing.T) {
	in := "first \x1b[2J\nsecond\r\nthird\u202e\n"
	want := "first \\x1b[2J\nsecond\\x0d\nthird\\u202e\n"
	if got := TerminalLines(in); got != want {
		t.Errorf("TerminalLines(%q) = %q, want %q", in, got, want)
	}
}

// Whatever goes in, nothing Hidden and no invalid UTF-8 comes out.
func FuzzTerminal(f *testing.F) {
	f.Add("\x1b[2J\u202e\U000E0041\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := Terminal(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Terminal(%q) = %q: not UTF-8", s, out)
		}
		if i := strings.IndexFunc(out, Hidden); i >= 0 {
			t.Fatalf("Terminal(%q) = %q: a hidden character at byte %d", s, out, i)
		}
	})
}

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                            "plain",
		"a\tb\nc":                          "a b c",
		"\x1b[2Jx\u202ey\u200bz\U000E0041": " [2Jxyz",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}
