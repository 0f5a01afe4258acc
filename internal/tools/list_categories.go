package tools

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher"
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
	filter := strings.TrimSpace(deref(in.Filter))
	after := ""
	if in.Cursor != nil && filter == "" {
		var ok bool
		if after, ok = decodeCursor(*in.Cursor); !ok {
			return nil, &gen.ToolError{Text: "cursor: not a cursor this server gave out. Pass the next_cursor of the previous page unchanged, or call list_categories without cursor to start again.", Structured: out}
		}
	}
	s := h.cur.Load()
	if err := h.withheld(s, out); err != nil {
		return nil, err
	}
	if filter != "" {
		return filtered(s, filter, in.Cursor, limit, out)
	}
	for _, c := range s.reg.Categories() { // sorted by slug
		if c.Slug <= after {
			continue
		}
		if len(out.Categories) == limit {
			out.NextCursor = ptr(encodeCursor(out.Categories[limit-1].Slug))
			break
		}
		out.Categories = append(out.Categories, summary(c))
	}
	return out, nil
}

// summary is a category as list_categories shows it: the curator's tags,
// or the slug's words when there are none.
func summary(c registry.Category) gen.CategorySummary {
	tags := c.Tags
	if len(tags) == 0 {
		tags = strings.Split(c.Slug, "-")
	}
	return gen.CategorySummary{Slug: c.Slug, Name: c.Name, Description: c.Description, Tags: tags}
}

// closestShown is how many categories an empty filtered answer names as
// the closest.
const closestShown = 3

// filtered answers list_categories with a filter: the categories the
// filter finds, best first, a page of limit from the cursor's rank. A
// category is found when a filter word meets one of its curator's tags
// (as the matcher compares words), when the matcher grounds it on the
// filter (its words, stems, typos and the category's query patterns,
// name and description, as get_sources reads a question), or when every
// filter word starts a word of its slug, name or description. Tag matches
// rank first, by how many filter words they meet, then the matcher's
// score. Nothing found: the matcher's closest categories, marked so.
func filtered(s *snapshot, filter string, cursor *string, limit int, out *gen.ListCategoriesOutput) (*gen.ListCategoriesOutput, error) {
	from := 0
	if cursor != nil {
		var ok bool
		if from, ok = decodeRankCursor(*cursor); !ok {
			return nil, &gen.ToolError{Text: "cursor: not a cursor this server gave out for a filter. Pass the next_cursor of the previous page unchanged with the same filter, or call list_categories without cursor to start again.", Structured: out}
		}
	}
	words := filterWords(filter)
	cats := s.reg.Categories()
	scores := map[string]matcher.Scored{}
	ranked, err := s.matcher.Match(filter, min(len(cats), maxRanked))
	if err != nil && !errors.Is(err, matcher.ErrEmptyQuery) && !errors.Is(err, matcher.ErrOnlyStopWords) {
		return nil, err
	}
	for _, r := range ranked {
		scores[r.Slug] = r
	}
	stems := make([]string, len(words))
	for i, w := range words {
		stems[i] = matcher.Stem(w)
	}
	type found struct {
		c     registry.Category
		tags  int
		score float64
	}
	var hits []found
	joined := strings.Join(words, "-")
	for _, c := range cats {
		tags := tagsMet(stems, joined, c.Tags)
		r, ranked := scores[c.Slug]
		if tags > 0 || r.Grounded || (len(words) > 0 && matchesFilter(words, c)) {
			if !ranked {
				r.Score = -1 // below every score the matcher gave
			}
			hits = append(hits, found{c, tags, r.Score})
		}
	}
	slices.SortStableFunc(hits, func(a, b found) int { // cats are sorted by slug: ties stay so
		if a.tags != b.tags {
			return b.tags - a.tags
		}
		return cmp.Compare(b.score, a.score)
	})
	if len(hits) == 0 {
		for _, r := range ranked[:min(len(ranked), closestShown)] {
			if c, ok := s.reg.Category(r.Slug); ok {
				out.Closest = append(out.Closest, summary(*c))
			}
		}
		return out, nil
	}
	for i := from; i < len(hits); i++ {
		if len(out.Categories) == limit {
			out.NextCursor = ptr(encodeRankCursor(i))
			break
		}
		out.Categories = append(out.Categories, summary(hits[i].c))
	}
	return out, nil
}

// maxRanked bounds the matcher's ranking for a filter: past it, a found
// category ranks by tags alone.
const maxRanked = 500

// tagsMet is how many of the filter's words (stems, as matcher.Stem gives
// them) meet a word of one of tags, or every word when the filter, joined
// by hyphens, is a tag.
func tagsMet(stems []string, joined string, tags []string) int {
	n := 0
	for _, st := range stems {
		for _, tag := range tags {
			if tag == joined || slices.ContainsFunc(strings.Split(tag, "-"), func(w string) bool { return matcher.Stem(w) == st }) {
				n++
				break
			}
		}
	}
	return n
}

// defaultPage is list_categories' page size when the call gives none.
const defaultPage = 100

// cursorPrefix versions the cursor, so a later format can tell old ones.
const cursorPrefix = "after:"

func encodeCursor(slug string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + slug))
}

// rankPrefix marks a filtered listing's cursor: the rank the next page
// starts at.
const rankPrefix = "rank:"

func encodeRankCursor(rank int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(rankPrefix + strconv.Itoa(rank)))
}

func decodeRankCursor(c string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	n, ok := strings.CutPrefix(string(b), rankPrefix)
	if !ok || len(n) > 9 {
		return 0, false
	}
	rank, err := strconv.Atoi(n)
	return rank, err == nil && rank > 0 && strconv.Itoa(rank) == n
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
	writeSummaries(&b, out.Categories)
	if len(out.Categories) == 0 {
		b.WriteString("\nNo category matches the filter.\n")
		if len(out.Closest) > 0 {
			fmt.Fprintf(&b, "\nClosest, not matches (%d):\n", len(out.Closest))
			writeSummaries(&b, out.Closest)
		}
		b.WriteString("\nTo browse: call list_categories without filter for every category, or get_sources with your question.\n")
	}
	if out.NextCursor != nil {
		fmt.Fprintf(&b, "\nMore follow: call list_categories with cursor %q (and the same filter).\n", *out.NextCursor)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func writeSummaries(b *strings.Builder, cats []gen.CategorySummary) {
	for _, c := range cats {
		fmt.Fprintf(b, "\n%s: %s\n  %s\n  Tags: %s\n", c.Slug, registry.Visible(c.Name), registry.Visible(c.Description), strings.Join(c.Tags, ", "))
	}
}
