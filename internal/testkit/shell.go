package testkit

import "strings"

// ShellWords splits a line of a documented shell command into its
// words, as the shell would for the plain commands the docs show: single
// and double quotes group (and are dropped), blanks separate, and a # at
// the start of a word begins a comment. Tests use it to check that the
// commands the docs and the CLI print name real commands and flags.
func ShellWords(line string) []string {
	var out []string
	var w strings.Builder
	quote, in := byte(0), false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		case c == '#' && !in:
			return out
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out
}
