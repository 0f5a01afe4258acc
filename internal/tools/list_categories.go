package tools

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

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
// or description.
func matchesFilter(words []string, c registry.Category) bool {
	if len(words) == 0 {
		return true
	}
	have := filterWords(c.Slug + " " + c.Name + " " + c.Description)
	for _, w := range words {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.HasPrefix(h, w) }) {
			return false
		}
	}
	return true
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
