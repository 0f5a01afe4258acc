package linkcheck

import "testing"

// A page's title is kept and published in the health file: the controls,
// text-direction and zero-width characters its author put there are
// removed, written or as entities.
func TestTitleDropsHiddenCharacters(t *testing.T) {
	page := "<title>\x1b]0;owned\x07Docs&#x202E; \u200bhome\U000E0041</title>"
	if got, want := title([]byte(page)), "]0;owned Docs home"; got != want {
		t.Errorf("title(%q) = %q, want %q", page, got, want)
	}
}
