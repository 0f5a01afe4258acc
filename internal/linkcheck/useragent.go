package linkcheck

import "strings"

// UserAgent names 3gs at version and the curator whose sources are
// checked, so a site's operator can tell who is asking. The curator's
// name is cut to 80 bytes, without control characters or parentheses.
func UserAgent(version, curator string) string {
	curator = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '(' || r == ')' {
			return -1
		}
		return r
	}, curator)
	if len(curator) > 80 {
		curator = curator[:80]
	}
	return "3gs/" + version + " (link check for the registry of " + strings.TrimSpace(curator) + "; +https://github.com/three-good-sources/3gs)"
}
