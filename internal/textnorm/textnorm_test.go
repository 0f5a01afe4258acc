package textnorm

import (
	"math/rand/v2"
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

// TestHasTokens holds HasTokens to len(Tokens(s)) > 0, over the test
// strings of this package, text with stop words, case and separators of
// every kind, and random strings of such pieces.
func TestHasTokens(t *testing.T) {
	for w := range stopWords {
		if len(w) > maxStopWord {
			t.Fatalf("stop word %q is longer than maxStopWord", w)
		}
	}
	pieces := []string{"", " ", "the", "The", "THE", "a", "I", "İ", "ı", "K", "\u212a", "yourselves", "YOURSELVES", "yourselvesx", "themselves", "don't", "don", "t",
		"rust", "Rust", "é", "É", "ß", "ẞ", "日本", "٣", "x1", "1", "-", "...", "\t", "\n", "\u00a0", "\u200b", "\xff", "\xe2\x80", "'", "?", "σ", "Σ", "ǅ", "ﬁ", "mightn", "MIGHTN", "shan't", "ll", "ve", "s", "ain't"}
	check := func(s string) {
		if got, want := HasTokens(s), len(Tokens(s)) > 0; got != want {
			t.Fatalf("HasTokens(%q) = %v, Tokens gives %q", s, got, Tokens(s))
		}
	}
	for _, a := range pieces {
		for _, b := range pieces {
			for _, sep := range []string{"", " ", "'", "\u00a0", "-"} {
				check(a + sep + b)
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		check(b.String())
	}
}

// IsStopWord is membership in stopWords, for every stop word, words one
// byte off them, and words of the same shape.
func TestIsStopWord(t *testing.T) {
	var words []string
	for w := range stopWords {
		words = append(words, w, w+"s", w[1:], w[:len(w)-1], strings.ToUpper(w), "x"+w, string(w[0]^0x20)+w[1:], string(w[0]+32)+w[1:])
	}
	words = append(words, "", "é", "\xff", "yourselvess", "ourselve", "a\x00", "\x00")
	for _, w := range words {
		if got, want := IsStopWord(w), stopWords[w]; got != want {
			t.Errorf("IsStopWord(%q) = %v, want %v", w, got, want)
		}
	}
}
