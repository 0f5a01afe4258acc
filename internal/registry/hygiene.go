package registry

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/three-good-sources/3gs/internal/strictjson"
)

// What a registry shows an agent must mean what it appears to mean. The
// schema bounds lengths and shapes; these rules refuse the text that reads
// one way and acts another:
//   - a URL with user information before its host: in
//     https://docs.python.org@evil.com/ the host is evil.com;
//   - control characters, and the bidirectional controls that reorder
//     what a person sees (U+202E turns "moc.elpmaxe" around), in URLs and
//     names;
//   - a name that is empty to the eye: only spaces, zero-width and other
//     invisible characters.
//
// Some things are legitimate but worth a second look, so validate warns
// and the registry still loads: a host that mixes scripts (Latin with
// Cyrillic, as in homograph attacks) or is punycode, and a host that is a
// private, loopback or link-local address, or a name only a local network
// resolves.

// checkName refuses control and bidirectional characters in a name, and
// a name with nothing visible in it.
func checkName(path, s string, fail func(path, reason string)) {
	if why := nameProblem(s); why != "" {
		fail(path, why)
	}
}

// nameProblem is what checkName finds wrong with the name s, or "".
func nameProblem(s string) string {
	if s == "" {
		return "" // the schema's minLength reports it
	}
	if r, at, ok := hiddenRune(s); ok {
		return "contains " + runeName(r) + " at character " + strconv.Itoa(at) + "; names may not hold control or text-direction characters, which change what a reader sees"
	}
	if strings.IndexFunc(s, func(r rune) bool { return !invisible(r) }) < 0 {
		return "has no visible character; give it a name a person can read"
	}
	return ""
}

// checkURL refuses user information and hidden characters in a URL, and
// returns the parsed URL when it passes, so the other URL rules (the
// duplicate check, the host warnings) need not parse it again.
func checkURL(path, raw string, fail func(path, reason string)) *url.URL {
	if !strings.HasPrefix(raw, "http://") && !strings.HasPrefix(raw, "https://") {
		return nil // the schema's pattern reports it
	}
	if r, at, ok := hiddenRune(raw); ok {
		fail(path, "contains "+runeName(r)+" at character "+strconv.Itoa(at)+"; a URL may not hold control or text-direction characters")
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		fail(path, "is not a URL: "+strings.TrimPrefix(err.Error(), "parse "+strconv.Quote(raw)+": "))
		return nil
	}
	if u.User != nil {
		fail(path, "has user information before its host ("+u.User.Username()+"@...): it leads to "+u.Hostname()+", not to the name written first; write the host alone")
		return nil
	}
	if u.Hostname() == "" {
		fail(path, "has no host")
		return nil
	}
	return u
}

// hiddenRune finds the first control or bidirectional-control character.
func hiddenRune(s string) (rune, int, bool) {
	i := 0
	for _, r := range s {
		if unicode.IsControl(r) || bidiControl(r) {
			return r, i, true
		}
		i++
	}
	return 0, 0, false
}

// bidiControl reports the characters that reorder displayed text.
func bidiControl(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F:
		return true
	case 0x202A <= r && r <= 0x202E, 0x2066 <= r && r <= 0x2069:
		return true
	}
	return false
}

// invisible reports characters that show nothing on their own.
func invisible(r rune) bool {
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800: // Hangul fillers, braille blank
		return true
	}
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r)
}

func runeName(r rune) string {
	return "U+" + strings.ToUpper(strconv.FormatInt(int64(r), 16))
}

// Warnings lists what validate should point out in a registry that loads:
// source and endorsement URLs whose host mixes scripts or is punycode, or
// is private, loopback or link-local. Curators may list such sources on
// purpose; the warning makes sure it is on purpose. checkRules collects
// them, in the order load errors are reported.
func Warnings(r *Registry) strictjson.Errors { return r.warnings }

// hostConcern says what is worth a second look about a URL's host.
func hostConcern(u *url.URL) string { return hostConcernOf(strings.ToLower(u.Hostname())) }

// hostConcernOf is hostConcern for a lowercase host name.
func hostConcernOf(host string) string {
	// A plain name (ASCII letters, digits, dots and hyphens, a letter among
	// them) is no IP address (IPv4 is digits and dots, IPv6 has colons) and
	// has no script but Latin: the two costly checks below cannot find
	// anything in it, and most hosts are such names.
	plain := strictjson.PlainHost(host)
	if !plain {
		if ip, err := netip.ParseAddr(host); err == nil {
			switch {
			case ip.IsLoopback():
				return "the host " + host + " is a loopback address: it reaches the reader's own machine, not a public source"
			case ip.IsPrivate():
				return "the host " + host + " is a private network address: only readers on that network reach it"
			case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
				return "the host " + host + " is a link-local address: only the local network segment reaches it"
			case ip.IsUnspecified():
				return "the host " + host + " is the unspecified address"
			}
			return ""
		}
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") || strings.HasSuffix(host, ".internal") || strings.HasSuffix(host, ".lan") {
		return "the host " + host + " is a local name: readers elsewhere cannot reach it"
	}
	for label := range strings.SplitSeq(host, ".") {
		if strings.HasPrefix(label, "xn--") {
			return "the host " + host + " is internationalized (punycode label " + label + "): check that it is the site you mean and not a look-alike"
		}
		if plain {
			continue
		}
		if scripts := scriptsOf(label); len(scripts) > 1 {
			return "the host " + host + " mixes scripts (" + strings.Join(scripts, " and ") + ") in the label " + strconv.Quote(label) + ", as look-alike domains do: check that it is the site you mean"
		}
	}
	return ""
}

// scriptsOf names the scripts of the letters in s, in order of appearance.
func scriptsOf(s string) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range s {
		if !unicode.IsLetter(r) {
			continue
		}
		name := "another script"
		for _, sc := range []struct {
			name  string
			table *unicode.RangeTable
		}{{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek}, {"Armenian", unicode.Armenian}, {"Han", unicode.Han}, {"Arabic", unicode.Arabic}, {"Hebrew", unicode.Hebrew}} {
			if unicode.Is(sc.table, r) {
				name = sc.name
				break
			}
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names
}
