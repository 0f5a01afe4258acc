package strictjson

import (
	"net/url"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// urlCorpus is every joining of a scheme, a host and a path from lists of
// the ordinary and the tricky, and random strings over URL characters.
func urlCorpus() []string {
	return testkit.URLCorpus{
		Schemes: []string{"https://", "http://", "HTTPS://", "Http://", "ftp://", "https:/", "https:", "", "//", "https:///"},
		Hosts: []string{"a.example", "docs.python.org", "x", "a-b.c0", "1.2.3.4", "127.0.0.1", "10.0.0.1", "0.0.0.0", "1.2.3", "1.2.3.4a",
			"localhost", "a.local", "a.internal", "a.lan", "x.localhost", "xn--p1ai", "a.xn--p1ai", "xn--", "A.example", "a.Example",
			"[::1]", "[fe80::1%25en0]", "a:80", "a:", "a:b:c", "u@a", "u:p@a", "%61.b", "é.fr", "а.ru", "a_b.c", "a b", "", ".", "..", "-", "a..b", "-a.b", "a.b.", "0", "a~b", "a+b", "a!b", "a$b"},
		Paths:         []string{"", "/", "//", "/a", "/a/", "/a//", "/A_b-c.d~e/f", "/a b", "/%7e", "/%zz", "/~x", "?q", "/?q", "#f", "/#f", "/a:b", "/@", "/a@b", "/é", "/\\", "/a\"b", "/<x>", "/{x}", "/|", "/^", "/`", "/a\tb", "/a\x00", "/.", "/./", "/..", "/+", "/a,b", "/a;b", "/a=b", "/'", "/(x)", "/*", "/!", "/$"},
		RandomSchemes: 3, Alphabet: "abcXYZ019.-_~/:@%?#[]!$&'()*+,;= \\\"<>{}|^`é\x7f\t", Random: 200000, Seed: [2]uint64{1, 2},
	}.Strings()
}

// TestPlainURL holds PlainURL to what it promises: every URL it accepts is
// one url.Parse reads as written, with that host, which FormatURI accepts
// without parsing; and it accepts the ordinary ones.
func TestPlainURL(t *testing.T) {
	plain := 0
	for _, s := range urlCorpus() {
		host, ok := PlainURL(s)
		if !ok {
			continue
		}
		plain++
		u, err := url.Parse(s)
		switch {
		case err != nil:
			t.Fatalf("%q: plain, but url.Parse: %v", s, err)
		case u.Scheme != "http" && u.Scheme != "https", u.User != nil, u.Opaque != "", u.RawQuery != "", u.ForceQuery, u.Fragment != "", u.RawPath != "":
			t.Fatalf("%q: plain, but parsed as %#v", s, u)
		case u.Host != host, u.Hostname() != host, u.Port() != "", strings.ToLower(host) != host:
			t.Fatalf("%q: plain with host %q, but url.Parse finds host %q (hostname %q)", s, host, u.Host, u.Hostname())
		case u.String() != s, u.Scheme+"://"+u.Host+u.Path != s:
			t.Fatalf("%q: plain, but url.Parse writes it back as %q", s, u.String())
		case strings.ContainsAny(s, " \t\r\n\\<>\"{}|^`"):
			t.Fatalf("%q: plain, but FormatURI refuses its characters", s)
		}
	}
	for _, s := range []string{"https://a.example", "https://a.example/", "http://docs.python.org/3/library/os.path.html", "https://github.com/rust-lang/rust-by-example", "https://en.wikipedia.org/wiki/Tom_Sawyer"} {
		if _, ok := PlainURL(s); !ok {
			t.Errorf("%q: not plain", s)
		}
	}
	if plain < 1000 {
		t.Fatalf("only %d plain URLs in the corpus", plain)
	}
}
