package registry

import (
	"net/url"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/strictjson"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// hostConcernBefore is hostConcern as it was before plain names skipped
// the address and script checks (every host goes through every check):
// the reference TestHostConcernPlain holds hostConcern to.
func hostConcernBefore(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if _, err := fetch.CheckHost(host); err != nil {
		return notPublicConcern(err)
	}
	for _, label := range strings.Split(host, ".") {
		if c := labelConcern(host, label, true); c != "" {
			return c
		}
	}
	return ""
}

func urlCases() []string {
	return testkit.URLCorpus{
		Schemes: []string{"https://", "http://", "HTTPS://", "ftp://", "https:/", ""},
		Hosts: []string{"a.example", "docs.python.org", "x", "a-b.c0", "1.2.3.4", "127.0.0.1", "10.0.0.1", "169.254.1.1", "0.0.0.0", "1.2.3", "1.2.3.4a", "1e2.3",
			"localhost", "LOCALHOST", "a.local", "a.internal", "a.lan", "x.localhost", "xn--p1ai", "a.xn--p1ai", "XN--p1ai", "xn--", "A.example",
			"[::1]", "[fe80::1%25en0]", "[::ffff:10.0.0.1]", "a:80", "127.0.0.1:80", "u@a", "u:p@a", "%61.b", "é.fr", "аpple.com", "раураl.com", "a_b.c", "", ".", "-", "a..b", "0", "0x7f.1", "中文.cn", "αβ.gr"},
		Paths:         []string{"", "/", "//", "/a/", "/A_b-c.d~e/f", "/a b", "/%7e", "?q", "/?q", "#f", "/a:b", "/@", "/é", "/.", "/+", "/a,b"},
		RandomSchemes: 2, Alphabet: "abcxnXYZ019.-_~/:@%?#[]+ é\x7fаα", Random: 100000, Seed: [2]uint64{3, 4},
	}.Strings()
}

// TestPlainURLChecks: for a URL strictjson.PlainURL accepts, checkCategory
// skips url.Parse; what it computes instead (no problem, the key, the
// host's concern) is what checkURL, urlKey and hostConcern say of it. And
// hostConcern, which no longer looks for addresses and scripts in plain
// names, says what it said before about every host.
func TestPlainURLChecks(t *testing.T) {
	plain := 0
	for _, s := range urlCases() {
		if u, err := url.Parse(s); err == nil {
			if got, want := hostConcern(u), hostConcernBefore(u); got != want {
				t.Fatalf("%q: hostConcern %q, before %q", s, got, want)
			}
		}
		host, ok := strictjson.PlainURL(s)
		if !ok {
			continue
		}
		plain++
		var problems []string
		u := checkURL("u", s, func(_, reason string) { problems = append(problems, reason) })
		switch {
		case u == nil || len(problems) > 0:
			t.Fatalf("%q: plain, but checkURL: %q", s, problems)
		case urlKey(u) != strings.TrimSuffix(s, "/"):
			t.Fatalf("%q: plain, key %q, but urlKey %q", s, strings.TrimSuffix(s, "/"), urlKey(u))
		case hostConcernOf(host) != hostConcernBefore(u):
			t.Fatalf("%q: plain, concern %q, but before %q", s, hostConcernOf(host), hostConcernBefore(u))
		}
	}
	if plain < 1000 {
		t.Fatalf("only %d plain URLs among the cases", plain)
	}
}
