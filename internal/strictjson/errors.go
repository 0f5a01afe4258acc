package strictjson

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is one problem in a document: where it is and what is wrong.
type Error struct {
	// Path locates the offending value, e.g. categories.rust.sources[1].rank.
	// It is empty when the problem concerns the document as a whole.
	Path string
	// Reason says what is wrong in words that suggest the fix.
	Reason string
	// Offset is 1 + the byte offset of a syntax error in the document, 0
	// when the problem has no place in the text. WithPosition turns it
	// into a line and column for a file a person edits.
	Offset int
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

// Errors holds every problem found in a document, in the order found.
// A decoder stops recording after MaxErrors and notes that it did.
type Errors []*Error

// Lines renders each problem as one "path: reason" line.
func (es Errors) Lines() []string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return lines
}

// MaxErrors bounds how many problems one document can report, so a hostile
// input cannot make the error list itself the expensive part.
const MaxErrors = 100

func (es Errors) Error() string {
	switch len(es) {
	case 0:
		return "no errors"
	case 1:
		return es[0].Error()
	}
	var b strings.Builder
	b.WriteString(es[0].Error())
	b.WriteString(" (and ")
	b.WriteString(strconv.Itoa(len(es) - 1))
	b.WriteString(" more)")
	return b.String()
}

// briefLimit is how many characters of a user-supplied string an error
// message may repeat.
const briefLimit = 40

// brief quotes s for an error message, escaping anything unprintable and
// cutting it short so a message never echoes a large input back.
func brief(s string) string {
	if utf8.RuneCountInString(s) > briefLimit {
		n := 0
		for i := range s {
			if n == briefLimit {
				s = s[:i]
				break
			}
			n++
		}
		return strconv.Quote(s) + "…"
	}
	return strconv.Quote(s)
}

// briefNumber shows a number's source text, cut short like brief.
func briefNumber(s string) string {
	if len(s) > briefLimit {
		return s[:briefLimit] + "…"
	}
	return s
}
