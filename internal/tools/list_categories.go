package tools

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// ListCategories implements gen.ToolHandlers. Pages are cut by slug, so a
// cursor stays valid across a reload: the next page starts after the last
// slug shown, whatever was added or removed meanwhile.
func (h *Handlers) ListCategories(_ context.Context, in *gen.ListCategoriesInput) (*gen.ListCategoriesOutput, error) {
	out := &gen.ListCategoriesOutput{Categories: []gen.CategorySummary{}}
	if in == nil {
		in = &gen.ListCategoriesInput{}
	}
	limit := defaultPage
	if in.Limit != nil {
		limit = *in.Limit
	}
	after := ""
	if in.Cursor != nil {
		var ok bool
		if after, ok = decodeCursor(*in.Cursor); !ok {
			return nil, &gen.ToolError{Text: "cursor: not a cursor this server gave out. Pass the next_cursor of the previous page unchanged, or call list_categories without cursor to start again.", Structured: out}
		}
	}
	words := filterWords(deref(in.Filter))
	s := h.cur.Load()
	if err := h.withheld(s, out); err != nil {
		return nil, err
	}
	for _, c := range s.reg.Categories() { // sorted by slug
		if c.Slug <= after || !matchesFilter(words, c) {
			continue
		}
		if len(out.Categories) == limit {
			out.NextCursor = ptr(encodeCursor(out.Categories[limit-1].Slug))
			break
		}
		out.Categories = append(out.Categories, gen.CategorySummary{Slug: c.Slug, Name: c.Name, Description: c.Description, Tags: strings.Split(c.Slug, "-")})
	}
	return out, nil
}

// defaultPage is list_categories' page size when the call gives none.
const defaultPage = 100

// cursorPrefix versions the cursor, so a later format can tell old ones.
const cursorPrefix = "after:"

func encodeCursor(slug string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + slug))
}

func decodeCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", false
	}
	slug, ok := strings.CutPrefix(string(b), cursorPrefix)
	return slug, ok && slug != "" && len(slug) <= 64 && strings.Trim(slug, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// filterWords splits a filter into lower-case words of letters and digits.
func filterWords(f string) []string {
	return strings.FieldsFunc(strings.ToLower(f), textnorm.IsSeparator)
}

// matchesFilter: every word starts some word of the category's slug, name
// or description, all lower-cased (as filterWords splits them). It reads
// the fields in place: splitting each category's text into a new slice
// of words took 259 ms a call at 100,000 categories, all of it garbage.
func matchesFilter(words []string, c registry.Category) bool {
	for _, w := range words {
		if !startsAWord(c.Slug, w) && !startsAWord(c.Name, w) && !startsAWord(c.Description, w) {
			return false
		}
	}
	return true
}

// startsAWord reports whether w, lower-case, starts some word of text
// once text is lower-cased: words as filterWords makes them, maximal runs
// of letters and digits, each rune lowered as strings.ToLower does.
func startsAWord(text, w string) bool {
	inWord := false // the rune before was part of a word
	matching := false
	k := 0 // bytes of w matched so far, in the word being read
	for _, r := range text {
		var sep bool
		if r < utf8.RuneSelf { // most text: no Unicode tables
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			sep = (r < 'a' || r > 'z') && (r < '0' || r > '9')
		} else {
			r = unicode.ToLower(r)
			sep = textnorm.IsSeparator(r)
		}
		if sep {
			inWord, matching = false, false
			continue
		}
		if !inWord {
			inWord, matching, k = true, true, 0
		}
		if !matching {
			continue
		}
		want, n := rune(w[k]), 1
		if want >= utf8.RuneSelf {
			want, n = utf8.DecodeRuneInString(w[k:])
		}
		if want != r {
			matching = false
			continue
		}
		if k += n; k == len(w) {
			return true
		}
	}
	return false
}

// ListCategoriesText implements gen.ToolHandlers.
func (h *Handlers) ListCategoriesText(out *gen.ListCategoriesOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Categories (%d):\n", len(out.Categories))
	for _, c := range out.Categories {
		fmt.Fprintf(&b, "\n%s: %s\n  %s\n  Tags: %s\n", c.Slug, registry.Visible(c.Name), registry.Visible(c.Description), strings.Join(c.Tags, ", "))
	}
	if out.NextCursor != nil {
		fmt.Fprintf(&b, "\nMore follow: call list_categories with cursor %q (and the same filter).\n", *out.NextCursor)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
