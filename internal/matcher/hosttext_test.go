package matcher

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// hostTextParsed is hostText through url.Parse alone, as it was before
// plain URLs were cut by hand.
func hostTextParsed(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	labels := strings.Split(strings.ToLower(u.Hostname()), ".")
	if len(labels) > 1 {
		labels = labels[:len(labels)-1]
	}
	if len(labels) > 0 && labels[0] == "www" {
		labels = labels[1:]
	}
	return strings.Join(labels, " ")
}

func TestHostTextPlain(t *testing.T) {
	hosts := []string{"a", "www", "www.x", "www.a.b", "a.www.b", "a..b", "www.", "wwwx.y", "www..a", "home-assistant.io", "www.home-assistant.io",
		"docs.python.org", "a.b.c.d", "x1.y2", "WWW.A.B", "1.2.3.4", "localhost", ".a", "a.", "www.www.a", "-.a"}
	for _, scheme := range []string{"https://", "http://", "HTTPS://", "ftp://"} {
		for _, h := range hosts {
			for _, path := range []string{"", "/", "/docs/", ":80/", "/?q", "#f"} {
				raw := scheme + h + path
				if got, want := hostText(raw), hostTextParsed(raw); got != want {
					t.Errorf("hostText(%q) = %q, url.Parse gives %q", raw, got, want)
				}
			}
		}
	}
}

// scan with fold finds in text with ASCII capitals the words and compounds
// it finds in strings.ToLower of it.
func TestScanFold(t *testing.T) {
	type found struct{ words, compounds []string }
	read := func(text string, fold *[]byte) found {
		var f found
		scan(text, fold, func(raw string) { f.words = append(f.words, strings.Clone(raw)) }, func(joined string) { f.compounds = append(f.compounds, joined) })
		return f
	}
	var buf []byte
	for _, text := range []string{"", "Rust", "The Rust Book", "Self-Hosted E-Mail, DKIM!", "THE OF AND", "Mail-In-A-Box on a Raspberry-Pi 4B", "x86-64 ABI", "The Don't-Panic guide's FAQ",
		"iOS/macOS Dev", "A.B.C. d.e.f", "ALLCAPS-lowercase MiXeD-CaSe", "  Leading and trailing  ", "Tab\tSeparated\nLines", "e-g E-G", "Straße", "Café Olé-Bar"} {
		lower := strings.ToLower(text)
		if got, want := read(text, &buf), read(lower, nil); !slices.Equal(got.words, want.words) || !slices.Equal(got.compounds, want.compounds) {
			t.Errorf("%q: folded %q %q, lowercased %q %q", text, got.words, got.compounds, want.words, want.compounds)
		}
	}
}
