package registry

import (
	"encoding/binary"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/strictjson"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// What a registry shows an agent must mean what it appears to mean. The
// schema bounds lengths and shapes; these rules refuse the text that reads
// one way and acts another:
//   - a URL with user information before its host: in
//     https://docs.python.org@evil.com/ the host is evil.com;
//   - control characters (Unicode Cc, and the line and paragraph
//     separators U+2028, U+2029) and format characters (Cf) in any string
//     of the registry: the bidirectional controls that reorder what a
//     person sees (U+202E turns "moc.elpmaxe" around), zero-width
//     characters that split or hide a word, and tag characters
//     (U+E0000-U+E007F) that spell text no reader sees but a language
//     model reads. A registry's text reaches agents; none of it may carry
//     what its reader cannot see;
//   - a name that is empty to the eye: only spaces, zero-width and other
//     invisible characters.
//
// Some things are legitimate but worth a second look, so validate warns
// and the registry still loads: a host that mixes scripts (Latin with
// Cyrillic, as in homograph attacks) or is punycode, and a host that is
// not public by fetch.CheckHost: a private, loopback, link-local or other
// special-purpose address in any spelling, or a name only a local
// network resolves.

// checkText refuses a control or format character anywhere in s, naming
// the path, the code point and where it is. It is one pass over s's bytes,
// and decodes only what is not ASCII. It reports whether s passed.
func checkText(path, s string, fail func(path, reason string)) bool {
	if why := textProblem(s); why != "" {
		fail(path, why)
		return false
	}
	return true
}

// textProblem is what checkText finds wrong with s, or "".
func textProblem(s string) string {
	if r, at, ok := hiddenRune(s); ok {
		return "contains " + runeName(r) + " (" + runeKind(r) + ") at character " + strconv.Itoa(at) + "; registry text may not hold control or format characters (Unicode Cc and Cf: text-direction controls, zero-width and tag characters), which hide text from a reader or reorder it; delete it"
	}
	return ""
}

// checkName refuses control and format characters in a name, and a name
// with nothing visible in it.
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
	if why := textProblem(s); why != "" {
		return why
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
	if !checkText(path, raw, fail) {
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

// hiddenRune finds the first character a reader cannot see that changes
// or hides text (Hidden), and its position in characters. ASCII is
// judged byte by byte; only other characters are decoded.
func hiddenRune(s string) (rune, int, bool) {
	i := 0
	// Eight bytes at a time while all are printable ASCII (0x20-0x7e):
	// then none of the three words below has a byte's top bit set. A byte
	// outside that range sets one (a borrow or carry may set a later
	// one too), and the byte loop below finds which.
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		if ((w-0x2020202020202020)|(w+0x0101010101010101)|w)&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		b := s[i]
		if b >= 0x80 {
			return hiddenFrom(s, i)
		}
		if b < 0x20 || b == 0x7f {
			return rune(b), i, true
		}
	}
	return 0, 0, false
}

// hiddenFrom is hiddenRune from byte i on, where the first i bytes are
// ASCII (so i characters).
func hiddenFrom(s string, i int) (rune, int, bool) {
	at := i
	for _, r := range s[i:] {
		if Hidden(r) {
			return r, at, true
		}
		at++
	}
	return 0, 0, false
}

// Hidden reports the characters no registry string may hold: those
// textnorm.Hidden reports (control characters, the line and paragraph
// separators, and format characters, which include the text-direction
// controls, zero-width characters and the tag characters).
func Hidden(r rune) bool { return textnorm.Hidden(r) }

// Visible is s without the characters Hidden reports (textnorm.Visible):
// for text that reaches an agent, as a second line of defence behind the
// loader's refusal. It returns s itself, without copying, when s has
// none, found by hiddenRune's quick pass over ASCII.
func Visible(s string) string {
	if _, _, ok := hiddenRune(s); !ok {
		return s
	}
	return textnorm.Visible(s)
}

// runeKind names what kind of hidden character r is.
func runeKind(r rune) string {
	switch {
	case bidiControl(r):
		return "a text-direction control"
	case 0xE0000 <= r && r <= 0xE007F:
		return "a tag character, which spells text no reader sees"
	case r >= 0x200B && r <= 0x200D, r == 0x2060, r == 0xFEFF:
		return "a zero-width character"
	case r == 0x2028, r == 0x2029:
		return "a line or paragraph separator"
	case r < 0xa0:
		return "a control character"
	}
	return "an invisible format character"
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
	if _, err := fetch.CheckHost(host); err != nil {
		return notPublicConcern(err)
	}
	// A plain name (ASCII letters, digits, dots and hyphens, a letter among
	// them) has no script but Latin: the costly check below cannot find
	// anything in it, and most hosts are such names.
	plain := strictjson.PlainHost(host)
	for label := range strings.SplitSeq(host, ".") {
		if c := labelConcern(host, label, !plain); c != "" {
			return c
		}
	}
	return ""
}

// notPublicConcern is the warning for a host fetch.CheckHost refuses: the
// one judgement of what is public, so that what the curator is warned of
// is exactly what a proposal may not name and what other nodes will not
// fetch from this registry.
func notPublicConcern(err error) string {
	var he *fetch.HostError
	if !errors.As(err, &he) {
		return err.Error()
	}
	return he.Subject() + " is " + he.Reason + ": readers elsewhere cannot reach it, and nodes that follow or endorse this registry will not fetch it"
}

// labelConcern flags one label of host: punycode, and, when scripts is
// set, letters of more than one script.
func labelConcern(host, label string, scripts bool) string {
	if strings.HasPrefix(label, "xn--") {
		return "the host " + host + " is internationalized (punycode label " + label + "): check that it is the site you mean and not a look-alike"
	}
	if !scripts {
		return ""
	}
	if names := scriptsOf(label); len(names) > 1 {
		return "the host " + host + " mixes scripts (" + strings.Join(names, " and ") + ") in the label " + strconv.Quote(label) + ", as look-alike domains do: check that it is the site you mean"
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
