package registry

import (
	"slices"
	"strings"
	"testing"
)

// withLinks is base with the curator claiming links (a JSON array's
// members, written as they are).
func withLinks(links string) string {
	return strings.Replace(base, `"pubkey":"pk:placeholder"}`, `"pubkey":"pk:placeholder","links":[`+links+`]}`, 1)
}

func TestCuratorLinks(t *testing.T) {
	for _, c := range []struct {
		name, links string
		want        []string
	}{
		{"https links", `"https://example.org","https://gist.github.com/ada/0123"`, nil},
		{"http to a loopback literal, for tests", `"http://127.0.0.1:8080/me","http://[::1]:8080/"`, nil},
		{"http elsewhere", `"http://example.org/me"`,
			[]string{"curator.links[0]: is http: a link is fetched to check that it holds the curator's key, and over plain http anyone on the way could add the key to the page; write https://example.org/me"}},
		{"http to a name that resolves to loopback", `"http://localhost:8080/"`,
			[]string{"curator.links[0]: is http: a link is fetched to check that it holds the curator's key, and over plain http anyone on the way could add the key to the page; write https://localhost:8080/"}},
		{"the same link twice", `"https://example.org/me","https://EXAMPLE.org/me/"`,
			[]string{"curator.links[1]: same link as curator.links[0]; list each link once"}},
		{"user information", `"https://example.org@evil.example/"`,
			[]string{"curator.links[0]: has user information before its host (example.org@...): it leads to evil.example, not to the name written first; write the host alone"}},
		{"a hidden character", "\"https://example.org/\u202egpj\"",
			[]string{"curator.links[0]: contains U+202E (a text-direction control) at character 20; " + hiddenAdvice}},
		{"nine links", `"https://a.example","https://b.example","https://c.example","https://d.example","https://e.example","https://f.example","https://g.example","https://h.example","https://i.example"`,
			[]string{"curator.links: must have at most 8 items, got 9"}},
		{"too long", `"https://example.org/` + strings.Repeat("a", 500) + `"`,
			[]string{"curator.links[0]: must be at most 512 characters long"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := problems(t, withLinks(c.links)); !slices.Equal(got, c.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}

// validate points out a loopback link as it does a loopback source.
func TestCuratorLinkWarning(t *testing.T) {
	r, err := Load([]byte(withLinks(`"http://127.0.0.1:8080/me"`)))
	if err != nil {
		t.Fatal(err)
	}
	if w := Warnings(r); len(w) != 1 || w[0].Path != "curator.links[0]" || !strings.Contains(w[0].Reason, "is loopback") {
		t.Errorf("warnings: %v", w)
	}
}
