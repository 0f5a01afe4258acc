package strictjson

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The checks below are the schema constraints the generator knows how to
// enforce. Each records a problem at p when the value breaks the constraint.

// MinLength checks a string's length in characters (code points), as JSON
// Schema counts them.
func (d *Decoder) MinLength(p *Path, s string, min int) {
	if utf8.RuneCountInString(s) < min {
		if min == 1 {
			d.Fail(p, "must not be empty")
		} else {
			d.Fail(p, "must be at least "+strconv.Itoa(min)+" characters long")
		}
	}
}

// MaxLength checks a string's length in characters.
func (d *Decoder) MaxLength(p *Path, s string, max int) {
	if len(s) > max && utf8.RuneCountInString(s) > max {
		d.Fail(p, "must be at most "+strconv.Itoa(max)+" characters long")
	}
}

// Pattern checks a string against a regular expression.
func (d *Decoder) Pattern(p *Path, s string, re *regexp.Regexp) {
	if !re.MatchString(s) {
		d.Fail(p, "must match the pattern "+re.String()+", got "+brief(s))
	}
}

// KeyPattern checks an object key against the schema's propertyNames pattern.
func (d *Decoder) KeyPattern(p *Path, key string, re *regexp.Regexp) {
	if !re.MatchString(key) {
		d.Fail(p, "key must match the pattern "+re.String())
	}
}

// KeyMaxLength checks an object key's length against propertyNames.
func (d *Decoder) KeyMaxLength(p *Path, key string, max int) {
	if utf8.RuneCountInString(key) > max {
		d.Fail(p, "key must be at most "+strconv.Itoa(max)+" characters long")
	}
}

// Enum checks that a string is one of the allowed values.
func (d *Decoder) Enum(p *Path, s string, allowed []string) {
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	d.Fail(p, "must be one of "+strings.Join(allowed, ", ")+"; got "+brief(s))
}

// Minimum checks an inclusive lower bound.
func (d *Decoder) Minimum(p *Path, v, min float64) {
	if v < min {
		d.Fail(p, "must be >= "+formatNumber(min))
	}
}

// Maximum checks an inclusive upper bound.
func (d *Decoder) Maximum(p *Path, v, max float64) {
	if v > max {
		d.Fail(p, "must be <= "+formatNumber(max))
	}
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Count checks an array's length against minItems and maxItems; a bound of
// -1 is absent.
func (d *Decoder) Count(p *Path, n, min, max int) {
	switch {
	case min == max && n != min:
		d.Fail(p, "must have exactly "+items(min)+", got "+strconv.Itoa(n))
	case min >= 0 && n < min:
		d.Fail(p, "must have at least "+items(min)+", got "+strconv.Itoa(n))
	case max >= 0 && n > max:
		d.Fail(p, "must have at most "+items(max)+", got "+strconv.Itoa(n))
	}
}

func items(n int) string {
	if n == 1 {
		return "1 item"
	}
	return strconv.Itoa(n) + " items"
}

// MinProperties checks that an object has at least min members.
func (d *Decoder) MinProperties(p *Path, n, min int) {
	if n < min {
		if min == 1 {
			d.Fail(p, "must not be empty")
		} else {
			d.Fail(p, "must have at least "+strconv.Itoa(min)+" members, got "+strconv.Itoa(n))
		}
	}
}

// FormatDate checks JSON Schema's "date" format: a full-date as RFC 3339
// defines it, e.g. 2026-11-21.
func (d *Decoder) FormatDate(p *Path, s string) {
	if len(s) != len("2006-01-02") {
		d.Fail(p, "must be a date in YYYY-MM-DD form, got "+brief(s))
		return
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		d.Fail(p, "must be a real date in YYYY-MM-DD form, got "+brief(s))
	}
}

// FormatDateTime checks JSON Schema's "date-time" format: an RFC 3339
// timestamp with a time zone, e.g. 2026-11-21T09:30:00Z.
func (d *Decoder) FormatDateTime(p *Path, s string) {
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil || strings.ContainsAny(s, "tz ") {
		d.Fail(p, "must be an RFC 3339 date and time such as 2026-11-21T09:30:00Z, got "+brief(s))
	}
}

// FormatURI checks JSON Schema's "uri" format: an absolute URI. URIs with an
// authority (http, https) must name a host.
func (d *Decoder) FormatURI(p *Path, s string) {
	if _, ok := PlainURL(s); ok {
		return // what url.Parse would find, without it
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || strings.ContainsAny(s, " \t\r\n\\<>\"{}|^`"):
		d.Fail(p, "must be an absolute URL, got "+brief(s))
	case u.Scheme == "":
		d.Fail(p, "must be an absolute URL with a scheme such as https://, got "+brief(s))
	case (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() == "":
		d.Fail(p, "must be an absolute URL with a host, got "+brief(s))
	}
}

// OneOf is an object's "oneOf" of required sets: branches that each
// require some of its fields, of which exactly one must be present in
// full. The generator writes one per object schema that has it.
type OneOf struct {
	// Sets holds each branch's fields as a seen set: bit i stands for the
	// object's i-th known field, as in Missing.
	Sets []uint64
	// Want says what the object needs, e.g. "exactly one of query or slug".
	Want string
	// Names says each branch's fields for people: "query", "start and end".
	Names []string
	// Help is what each branch is for, from their descriptions ("query
	// searches by topic; slug names a category"), or "".
	Help string
}

// OneOf records a problem at p, the object, when the fields it held
// (seen) complete no branch of rule, or more than one. The reason says
// which, and what each branch is for, so the caller can choose.
func (d *Decoder) OneOf(p *Path, seen uint64, rule *OneOf) {
	held := 0
	for _, set := range rule.Sets {
		if seen&set == set {
			held++
		}
	}
	if held == 1 {
		return
	}
	reason := "needs " + rule.Want + ", got "
	switch {
	case held == 0 && len(rule.Sets) == 2:
		reason += "neither"
	case held == 0:
		reason += "none of them"
	case held == 2 && len(rule.Sets) == 2:
		reason += "both"
	default:
		var names []string
		for i, set := range rule.Sets {
			if seen&set == set {
				names = append(names, rule.Names[i])
			}
		}
		reason += strings.Join(names, ", ")
	}
	if rule.Help != "" {
		reason += ": " + rule.Help
	}
	d.Fail(p, reason)
}

// PlainHost reports whether host is made of lowercase ASCII letters,
// digits, dots and hyphens, with at least one letter.
func PlainHost(host string) bool {
	letter := false
	for i := 0; i < len(host); i++ {
		switch c := host[i]; {
		case 'a' <= c && c <= 'z':
			letter = true
		case '0' <= c && c <= '9', c == '.', c == '-':
		default:
			return false
		}
	}
	return letter
}

// PlainURL recognizes the URLs most sources have, http:// or https://, a
// plain host (PlainHost) and a path of unreserved characters and slashes
// only, and returns the host. Such a URL is one url.Parse reads as written
// (no user information, no escaped characters, no port, query or
// fragment; the host is Hostname), so the checks of URLs need not parse
// it; anything else goes through url.Parse. TestPlainURL holds it to
// that.
func PlainURL(raw string) (host string, ok bool) {
	rest, ok := strings.CutPrefix(raw, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(raw, "http://"); !ok {
			return "", false
		}
	}
	end := strings.IndexByte(rest, '/')
	if end < 0 {
		end = len(rest)
	}
	if host = rest[:end]; !PlainHost(host) {
		return "", false
	}
	for i := end; i < len(rest); i++ {
		switch c := rest[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '/', c == '-', c == '.', c == '_', c == '~':
		default:
			return "", false
		}
	}
	return host, true
}
