package curatorlinks

import (
	"net/url"
	"strings"
	"testing"
)

const key = "pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o"

func TestContainsTheExactKeyAsAWord(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{key, true},
		{"<p>My 3gs key: " + key + "</p>", true},
		{`{"pubkey":"` + key + `"}`, true},
		{"line one\n" + key + "\n", true},
		{key + "y", false},                       // a longer key that starts with ours
		{key + "_", false},                       // still one word to grep -w
		{"x" + key, false},                       // a word that ends with ours
		{key[:len(key)-1], false},                // one character short
		{strings.ToUpper(key), false},            // keys are case-sensitive
		{key + "y and again " + key + ".", true}, // a later whole-word copy counts
		{"", false},
	} {
		if got := Contains([]byte(c.body), key); got != c.want {
			t.Errorf("Contains(%q) = %v, want %v", c.body, got, c.want)
		}
	}
}

func TestBareOrigin(t *testing.T) {
	for raw, want := range map[string]bool{
		"https://example.org":        true,
		"https://example.org/":       true,
		"https://example.org:8443":   true,
		"https://example.org/me":     false,
		"https://example.org/?x=1":   false,
		"https://example.org/#about": false,
		"https://example.org?":       false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := BareOrigin(u); got != want {
			t.Errorf("BareOrigin(%s) = %v, want %v", raw, got, want)
		}
	}
}

func TestCheckCommand(t *testing.T) {
	for link, want := range map[string]string{
		"https://example.org":          `curl -sf 'https://example.org/.well-known/3gs.json' | tr -d ' \t\r\n' | grep -Fx '{"pubkey":"` + key + `"}' || curl -sf 'https://example.org' | grep -Fw '` + key + "'",
		"https://example.org/me?a=1&b": "curl -sf 'https://example.org/me?a=1&b' | grep -Fw '" + key + "'",
		"https://example.org/it's":     `curl -sf 'https://example.org/it'\''s' | grep -Fw '` + key + "'",
	} {
		if got := CheckCommand(link, key); got != want {
			t.Errorf("CheckCommand(%s):\n got %s\nwant %s", link, got, want)
		}
	}
}
