package pages

import "testing"

// TestTemplatesParse: every page's template parses with the layout. They
// are parsed on first use (htmlPages), so a broken one would otherwise
// show only when its page is first asked for.
func TestTemplatesParse(t *testing.T) {
	m := htmlPages()
	for _, n := range pageNames {
		if m[n] == nil || m[n].Lookup("layout.html") == nil || m[n].Lookup(n+".html") == nil {
			t.Errorf("page %s: template or layout missing", n)
		}
	}
}
