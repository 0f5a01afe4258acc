package matcher

import (
	"net/url"
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
