package testkit

import (
	"slices"
	"testing"
)

func TestShellWords(t *testing.T) {
	for line, want := range map[string][]string{
		`3gs init node --name 'Your name'`:             {"3gs", "init", "node", "--name", "Your name"},
		`./3gs token new --tokens "$NODE/tokens.json"`: {"./3gs", "token", "new", "--tokens", "$NODE/tokens.json"},
		`3gs verify R   # says OK`:                     {"3gs", "verify", "R"},
		`echo a#b`:                                     {"echo", "a#b"},
		`  `:                                           nil,
	} {
		if got := ShellWords(line); !slices.Equal(got, want) {
			t.Errorf("ShellWords(%q) = %q, want %q", line, got, want)
		}
	}
}
