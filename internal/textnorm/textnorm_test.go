package textnorm

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	for in, want := range map[string][]string{
		"How do I learn Rust?":      {"learn", "rust"},
		"self-hosted e-mail, DKIM!": {"self", "hosted", "e", "mail", "dkim"},
		"ÄÖÜ Straße":                {"äöü", "straße"},
		"the of and":                nil,
		"":                          nil,
		"k8s\x00a11y":               {"k8s", "a11y"},
	} {
		if got := Tokens(in); !slices.Equal(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzTokens: whatever a query holds, its tokens are non-empty words of
// letters and digits, lowercase, never stop words, valid UTF-8 when the
// input was; and normalizing twice changes nothing, so a pattern stored
// normalized matches the same queries as the original.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"learn rust", "Postfix + DKIM", "ÄÖÜ straße", "İstanbul", "ǅemal", "the", "\xff\xfe", "a\u0307b", "k8s", strings.Repeat("go ", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokens(s)
		for _, w := range toks {
			if w == "" || IsStopWord(w) {
				t.Fatalf("%q: token %q", s, w)
			}
			if strings.IndexFunc(w, IsSeparator) >= 0 && utf8.ValidString(s) {
				t.Fatalf("%q: token %q holds a separator", s, w)
			}
		}
		once := Normalize(s)
		if twice := Normalize(once); twice != once {
			t.Fatalf("%q: normalizes to %q, then to %q", s, once, twice)
		}
		if utf8.ValidString(s) && !utf8.ValidString(once) {
			t.Fatalf("%q: normalized to invalid UTF-8 %q", s, once)
		}
	})
}
