package textnorm

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hidden reports the characters that change or hide text without being
// seen: control characters (Cc: C0, DEL and C1, among them ESC, which
// starts a terminal's escape sequences), the line and paragraph
// separators, and format characters (Cf), which include the
// text-direction controls, zero-width characters and the tag characters
// U+E0000-U+E007F. The registry refuses them in its text; Terminal shows
// them.
func Hidden(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x80:
		return false
	case r < 0xa0, r == 0x2028, r == 0x2029:
		return true
	case 0xE0000 <= r && r <= 0xE007F:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// Visible is s without the characters Hidden reports (a control
// character becomes a space, so a line break or tab still parts words):
// for text from elsewhere kept in files and answers that programs and
// agents read, where an escape would be taken for the text itself. It
// returns s itself, without copying, when s has none.
func Visible(s string) string {
	if strings.IndexFunc(s, Hidden) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case !Hidden(r):
			b.WriteRune(r)
		case r < 0xa0 || r == 0x2028 || r == 0x2029:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// Terminal is text that came from elsewhere (a node, a peer, a proposer,
// a web page) made safe to print to a terminal: every character Hidden
// reports, and every byte that is not UTF-8, is written as a visible
// escape instead (\x1b, \x9b, \u202e, \U000e0041), so no escape
// sequence, colour or reordering reaches the terminal and the reader
// still sees that something was there. A line break is escaped too, so
// the text stays on the line it is printed on; TerminalLines keeps them.
// It returns s itself when there is nothing to escape.
func Terminal(s string) string { return terminal(s, false) }

// TerminalLines is Terminal for a block of several lines: line feeds are
// kept, everything else is escaped as Terminal does (a carriage return
// too, which would let a line overwrite the one printed before it).
func TerminalLines(s string) string { return terminal(s, true) }

func terminal(s string, lines bool) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f || i < len(s) && lines && s[i] == '\n' {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			writeEscape(&b, rune(s[i])) // a byte that is not UTF-8: some terminals read 0x9b as CSI
		case r == '\n' && lines, !Hidden(r):
			b.WriteString(s[i : i+n])
		default:
			writeEscape(&b, r)
		}
		i += n
	}
	return b.String()
}

// writeEscape writes r as Go writes it in a string literal: \xHH below
// U+0100, \uHHHH in the rest of the first plane, \UHHHHHHHH beyond.
func writeEscape(b *strings.Builder, r rune) {
	switch {
	case r < 0x100:
		b.WriteString(`\x`)
		pad(b, r, 2)
	case r <= 0xffff:
		b.WriteString(`\u`)
		pad(b, r, 4)
	default:
		b.WriteString(`\U`)
		pad(b, r, 8)
	}
}

func pad(b *strings.Builder, r rune, width int) {
	h := strconv.FormatInt(int64(r), 16)
	b.WriteString(strings.Repeat("0", width-len(h)))
	b.WriteString(h)
}
