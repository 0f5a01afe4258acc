package tools

import (
	"fmt"
	"slices"
	"strings"

	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
)

// The listing a no-match answer puts in front of the agent, shared by
// get_sources (one registry) and get_federated_sources (ours and every
// endorsed curator's): the categories the matcher has evidence for
// (matcher.Scored.Grounded) closest first, the best with what they cover,
// then the others in catalog order, by slug and name, as many as fit in
// answerBudget. A category the query shares nothing with is never
// offered as a candidate nor called close: the agent still sees it, in
// the catalog's order, and can pick it or decline.

// shelf is one registry's part in a listing.
type shelf struct {
	reg *registry.Registry
	// ranked are its categories closest to the query, best first (only
	// the grounded ones are listed as such); confident, whether the best
	// is an answer (see matchFor).
	ranked    []matcher.Scored
	confident bool
	// tag starts each of its lines ("[own] "): "" when it is listed alone.
	tag string
	// note is what the answer says once about the registry when it lists
	// any of its categories (whose it is); charged to the budget then.
	note string
	// foreign: its curator is not ours, so its names and descriptions are
	// shown on one line (oneLine), as someone else's words.
	foreign bool
	// visible: registry.Visible changes none of its names nor the first
	// lines of its descriptions (snapshot.visible, checked once per
	// registry), so they are shown as they are.
	visible bool
	// lineBytes are about how many bytes a line not described takes, on
	// average: by slug and name, and by slug alone (snapshot.lineBytes,
	// once per registry), so the listing's slice of them is made at its
	// size once; zero when unknown.
	lineBytes [2]int
	// index finds its categories by slug (snapshot.index); nil: the
	// registry's own search.
	index *slugIndex
}

// category is the category of slug on sh.
func (sh *shelf) category(slug string) *registry.Category {
	if sh.index != nil {
		return sh.index.category(slug)
	}
	c, _ := sh.reg.Category(slug)
	return c
}

// listed is one category of a listing.
type listed struct {
	shelf int
	slug  string
	score float64
	// cat is the category, looked up once when it is shown (nil before).
	cat *registry.Category
	// near: described as close to the query in meaning only (byLead).
	near bool
	// part is which part of the listing a line not described is in.
	part phase
	// name is the category's name as its line shows it ("" on a compact
	// listing's lines not described); desc, a described line's first
	// line of what it covers, as shown.
	name, desc string
}

// catalog is what a listing shows: described are the closest with what
// they cover, more the next ones by slug and name. Its lines are written
// once, by writeText, straight into the answer after its heading: they
// are chosen first (list), and measured as they are, so the heading that
// counts them comes before them without their text being kept anywhere.
type catalog struct {
	described, more []listed
	// shown counts the categories shown of each shelf.
	shown []int
	total int // categories on all shelves
	// grounded counts the categories shown as close to the query: the
	// ranked ones the matcher has evidence for. The others shown follow
	// in catalog order.
	grounded int
	// hinted counts those shown next, without evidence but ranked by
	// the faint signs the matcher saw (compact listings only).
	hinted int
	// near counts the described categories without evidence that are
	// close to the query in meaning only (matcher.Scored.Near), among
	// the grounded by their key (byLead); not counted in grounded.
	near  int
	whole bool
	// What writing the lines needs: the shelves' tags, whether the lines
	// not described are by slug alone, how many lines each part has, and
	// the bytes of them all.
	shelves []shelf
	compact bool
	parts   [3]int
	size    int
	// describedSize is the bytes of the described lines alone, which an
	// answer pointing at the catalog in the instructions writes.
	describedSize int
}

// list chooses what a no-match answer shows within room bytes (the
// lines, and the notes of the shelves they come from): the closest
// grounded categories across shelves by score (ties: the earlier shelf first),
// each shelf keeping its own order; the best few described
// (maxCandidates, or maxCandidatesLarge when the shelves hold more than
// wholeCatalog categories, as the list cannot be whole), then the others
// ranked, then every other category, shelf by shelf in slug order, until
// one does not fit. From the first described line that does not fit on,
// they are shown by slug and name instead (by slug alone when the list
// cannot be whole), so no description, however long, costs the answer its
// list.
func list(shelves []shelf, room int) catalog { return listNear(shelves, room, false) }

// listNear is list, and when near and some category is grounded, the
// described are chosen and ordered by one key (matcher.Scored.Lead: score
// plus closeness in meaning) among the grounded and the ranked categories
// close to the query in meaning only (matcher.Scored.Near), so a category
// near in meaning may come before a weak word match (byLead). Each of
// those near in meaning only says so on its own line (meaningOnlyLine),
// so an agent does not take it for a word match. A query that shares
// nothing with any category still gets no candidates: the answer says
// the registry has nothing it shares a word with, and near in meaning
// alone is too weak a sign to put a category forward on its own.
func listNear(shelves []shelf, room int, near bool) catalog {
	return choose(lister{shelves: shelves, room: room}, near)
}

// describedNear is listNear's described categories alone, the same ones
// in the same order, without choosing the others: an answer pointing at
// the catalog in the session's instructions shows no more, and choosing
// them was most of the listing's work.
func describedNear(shelves []shelf, room int) catalog {
	return choose(lister{shelves: shelves, room: room, describedOnly: true}, true)
}

// choose is listNear for ls, which names the shelves and the room.
func choose(ls lister, near bool) catalog {
	shelves := ls.shelves
	ls.c = catalog{shown: make([]int, len(shelves)), shelves: shelves}
	c := &ls.c
	for _, sh := range shelves {
		c.total += len(sh.reg.Categories())
	}
	describe := maxCandidates
	// compact: the list cannot be whole, so the ones after the described
	// are named by slug alone, comma-separated, about half the bytes of a
	// "slug: name" line each: twice as many of the closest fit, and a
	// slug is the curator's short name for the topic.
	ls.compact = c.total > wholeCatalog
	c.compact = ls.compact
	if ls.compact {
		describe = maxCandidatesLarge
	}
	c.described = make([]listed, 0, describe)
	if per := shelves[0].lineBytes[b2i(ls.compact)]; per > 0 && ls.room > 0 && !ls.describedOnly {
		// A quarter more than the average says, as the closest may be
		// shorter than most.
		n := ls.room / per
		c.more = make([]listed, 0, min(c.total, n+n/4+4))
	}
	full := false
	if near && len(shelves) == 1 && anyGrounded(shelves) {
		full = ls.byLead(describe)
		describe = 0
	}
	if !full && (describe > 0 || !ls.describedOnly) {
		full = ls.ranked(describe, true)
	}
	// Only the described are wanted: the others are not chosen.
	full = full || ls.describedOnly
	c.grounded = len(c.described) + len(c.more) - c.near
	if ls.compact && !full {
		// The list cannot be whole, so something must choose which of
		// the rest it shows: the faint signs the matcher saw (a word in
		// a source's prose, a loose link, a generic word) choose better
		// than the alphabet, and the text says that is all they are.
		ls.phase = hinted
		n := len(c.more)
		full = ls.ranked(0, false)
		c.hinted = len(c.more) - n
	}
	// Then every other category, while they fit: the shelf's categories
	// are in catalog (slug) order, so the ones shown already are skipped
	// by walking their slugs, sorted, alongside; no set of every
	// category shown is kept.
	ls.phase = catalogOrder
	for i := 0; i < len(shelves) && !full; i++ {
		skip := ls.shownSlugs(i)
		cats := shelves[i].reg.Categories()
		for j := range cats {
			cat := &cats[j]
			for len(skip) > 0 && skip[0] < cat.Slug {
				skip = skip[1:]
			}
			if len(skip) > 0 && skip[0] == cat.Slug {
				continue
			}
			if !ls.add(listed{shelf: i, slug: cat.Slug, cat: cat}, false) {
				full = true
				break
			}
		}
	}
	c.whole = c.shownCount() == c.total
	return ls.c
}

// moreForStructure is what of c.more a no-match answer's structured
// more_categories carries: all of it when the list is the whole of what
// the shelves hold, so a client holds every category, and nothing when
// it is not. The text names every category it shows, and repeating them
// as JSON made a large registry's answer line three times its text (11
// KB of a 15 KB line at 100,000 categories); even the first 20 kept the
// line over 8 KB when ten candidates came described. A program has the
// described candidates, category_count, and list_categories to browse.
func (c *catalog) moreForStructure() []listed {
	if c.whole {
		return c.more
	}
	return nil
}

// writeText writes c's lines to b: the described, then each part of the
// others after its label. They were chosen in that order, so each line
// is written as it was measured, once.
func (c *catalog) writeText(b *strings.Builder) {
	b.Grow(c.size)
	c.writeDescribedLines(b)
	var p phase
	n := 0 // lines written of part p
	for i := range c.more {
		l := &c.more[i]
		if l.part != p || i == 0 {
			p, n = l.part, 0
			b.WriteString(c.label(p))
		}
		c.writeLine(b, l, n == 0)
		n++
	}
}

// writeDescribedLines writes c's described lines to b, as listed.
func (c *catalog) writeDescribedLines(b *strings.Builder) {
	for i := range c.described {
		c.writeDescribed(b, &c.described[i])
	}
}

// text is c's lines as one string (writeText's).
func (c *catalog) text() string {
	var b strings.Builder
	c.writeText(&b)
	return b.String()
}

// isDescribed reports whether slug of shelf i is described already:
// byLead describes some of the ranked categories before the passes over
// them (ranked), which meet them again.
func (ls *lister) isDescribed(i int, slug string) bool {
	for _, l := range ls.c.described {
		if l.shelf == i && l.slug == slug {
			return true
		}
	}
	return false
}

// shownSlugs are the slugs of shelf i shown so far, sorted.
func (ls *lister) shownSlugs(i int) []string {
	var out []string
	for _, part := range [][]listed{ls.c.described, ls.c.more} {
		for _, l := range part {
			if l.shelf == i {
				out = append(out, l.slug)
			}
		}
	}
	slices.Sort(out)
	return out
}

// label is what comes before the not-described lines of part p, charged
// to the room with the first of them.
func (c *catalog) label(p phase) string {
	switch {
	case p == closest && c.compact:
		return nextCompact
	case p == closest:
		return nextLabel
	case p == hinted:
		return hintsLabel
	case c.grounded == 0 && c.parts[hinted] == 0 && c.compact:
		return "\n"
	case c.grounded == 0 && c.parts[hinted] == 0:
		return ""
	case c.compact:
		return othersCompact
	}
	return othersLabel
}

// The labels of a listing's parts, charged to its room.
const (
	nextCompact   = "\nThe next closest, by slug: "
	nextLabel     = "\nThe next closest, by slug and name:"
	hintsLabel    = "\nNo evidence, only faint signs, by slug: "
	othersCompact = "\nOthers, in catalog order, by slug: "
	othersLabel   = "\nThe others, by slug and name:"
)

// anyGrounded reports whether a category of any shelf has evidence.
func anyGrounded(shelves []shelf) bool {
	for _, sh := range shelves {
		for _, r := range sh.ranked {
			if r.Grounded {
				return true
			}
		}
	}
	return false
}

// lister is list at work: the catalog so far, the room left, and the
// part it is choosing lines for.
type lister struct {
	shelves []shelf
	room    int
	compact bool
	phase   phase
	// describedOnly: the listing ends with the described categories
	// (describedNear).
	describedOnly bool
	c             catalog
}

// phase is which part of a listing lister is choosing.
type phase uint8

const (
	closest      phase = iota // grounded categories, closest first
	hinted                    // ranked ones without evidence (compact listings only)
	catalogOrder              // every other category, in catalog order
)

// ranked shows the ranked categories whose Grounded is grounded, merged
// across shelves by score, the first describe of them described while
// they fit, and reports whether the listing is full.
func (ls *lister) ranked(describe int, grounded bool) (full bool) {
	shelves := ls.shelves
	next := make([]int, len(shelves))
	for !full {
		best := -1
		for i, sh := range shelves {
			if next[i] < len(sh.ranked) && (best < 0 || sh.ranked[next[i]].Score > shelves[best].ranked[next[best]].Score) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		r := shelves[best].ranked[next[best]]
		next[best]++
		// A ranked list names a category once (Matcher.Match), and one
		// pass takes its grounded categories, the other the rest; only
		// those byLead described already are met again.
		if r.Grounded != grounded || ls.isDescribed(best, r.Slug) {
			continue
		}
		l := listed{shelf: best, slug: r.Slug, score: r.Score}
		if len(ls.c.described) < describe {
			if ls.add(l, true) {
				continue
			}
			describe = len(ls.c.described) // the rest by slug and name
		}
		if ls.describedOnly {
			return true
		}
		full = !ls.add(l, false)
	}
	return full
}

// add shows l, described or not, if it fits; false when it does not.
// Only the line's parts are made (the name and description as shown),
// and its length counted: the line is written by writeText.
func (ls *lister) add(l listed, described bool) bool {
	c := &ls.c
	sh := &ls.shelves[l.shelf]
	if l.cat == nil {
		l.cat = sh.category(l.slug)
	}
	var cost int
	if described {
		l.name, l.desc = describedParts(sh, l.cat)
		cost = describedLen(sh, &l)
	} else {
		l.part = ls.phase
		l.name = ls.name(sh, l.cat)
		first := c.parts[l.part] == 0
		cost = ls.lineLen(sh, l.slug, l.name, first)
		if first {
			cost += len(c.label(l.part))
		}
	}
	if c.shown[l.shelf] == 0 {
		cost += len(sh.note)
	}
	if cost > ls.room {
		return false
	}
	ls.room -= cost
	c.shown[l.shelf]++
	if c.shown[l.shelf] == 1 {
		c.size -= len(sh.note) // the notes are written by the caller
	}
	c.size += cost
	if described {
		c.described = append(c.described, l)
		c.describedSize += cost
	} else {
		c.parts[l.part]++
		c.more = append(c.more, l)
	}
	return true
}

// name is cat's name as a listing shows it, from shelf sh (unused in a
// compact listing's lines, so not made there).
func (ls *lister) name(sh *shelf, cat *registry.Category) string {
	switch {
	case ls.compact:
		return ""
	case sh.foreign:
		return oneLine(cat.Name, 200)
	case sh.visible:
		return cat.Name
	}
	return registry.Visible(cat.Name)
}

// describedParts are cat's name and first line of what it covers as a
// described line shows them, from shelf sh.
func describedParts(sh *shelf, cat *registry.Category) (name, desc string) {
	d := firstLine(cat.Description)
	switch {
	case sh.foreign:
		return oneLine(cat.Name, 200), oneLine(d, 500)
	case sh.visible:
		return cat.Name, d
	}
	return registry.Visible(cat.Name), registry.Visible(d)
}

// describedLen is the length of l's described line (candidateLine's, or
// meaningOnlyLine's), from shelf sh.
func describedLen(sh *shelf, l *listed) int {
	n := len("\n- ") + len(sh.tag) + len(l.slug) + len(" (") + len(l.name) + len("): ") + len(l.desc)
	switch {
	case l.near:
		n += len(meaningOnlyMark)
	case l.score >= minShownScore:
		var buf [24]byte
		n += len(", score ") + len(appendScore(buf[:0], l.score))
	}
	return n
}

// writeDescribed writes l's described line: "- slug (Name, score 0.31):
// what it covers" (candidateLine), or meaningOnlyLine's.
func (c *catalog) writeDescribed(b *strings.Builder, l *listed) {
	b.WriteString("\n- ")
	b.WriteString(c.shelves[l.shelf].tag)
	b.WriteString(l.slug)
	b.WriteString(" (")
	b.WriteString(l.name)
	switch {
	case l.near:
		b.WriteString(meaningOnlyMark)
	case l.score >= minShownScore:
		var buf [24]byte
		b.WriteString(", score ")
		b.Write(appendScore(buf[:0], l.score))
	}
	b.WriteString("): ")
	b.WriteString(l.desc)
}

// lineLen is the length of the not-described line writeLine writes, the
// first of its part or not.
func (ls *lister) lineLen(sh *shelf, slug, name string, first bool) int {
	switch {
	case ls.compact && first:
		return len(sh.tag) + len(slug)
	case ls.compact:
		return len(", ") + len(sh.tag) + len(slug)
	}
	return len("\n- ") + len(sh.tag) + len(slug) + len(": ") + len(name)
}

// writeLine writes a not-described line: ", slug" in a compact listing
// (the first of its part without its comma), otherwise "\n- slug: name".
func (c *catalog) writeLine(b *strings.Builder, l *listed, first bool) {
	switch {
	case c.compact && first:
	case c.compact:
		b.WriteString(", ")
	default:
		b.WriteString("\n- ")
	}
	b.WriteString(c.shelves[l.shelf].tag)
	b.WriteString(l.slug)
	if !c.compact {
		b.WriteString(": ")
		b.WriteString(l.name)
	}
}

// candidateLine is a described category's line: "- slug (Name, score
// 0.31): what it covers", without the score below minShownScore.
func candidateLine(slug, name, description string, score float64) string {
	s := "\n- " + slug + " (" + name
	if score >= minShownScore {
		s += ", score " + fmtScore(score)
	}
	return s + "): " + description
}

// shownCount is how many categories c shows.
func (c *catalog) shownCount() int { return len(c.described) + len(c.more) }

// heading says what the listing is: the whole of what the shelves hold,
// or a part of it; those that share words with the query closest first,
// the others in catalog order. what names the whole ("the registry's").
func (c *catalog) heading(what string) string {
	switch {
	case c.near > 0 && c.whole:
		return fmt.Sprintf(" %s %d categories, the %d closest first (%d in meaning only, so marked), then the others:", capitalize(what), c.total, c.grounded+c.near, c.near)
	case c.near > 0 && c.grounded+c.near == c.shownCount():
		return fmt.Sprintf(" The %d closest of %s %d categories (%d in meaning only, so marked):", c.shownCount(), what, c.total, c.near)
	case c.near > 0:
		return fmt.Sprintf(" %d of %s %d categories: the %d closest first (%d in meaning only, so marked), then others:", c.shownCount(), what, c.total, c.grounded+c.near, c.near)
	case c.grounded == 0 && c.whole:
		return fmt.Sprintf(" %s %d categories, in catalog order:", capitalize(what), c.total)
	case c.grounded == 0 && c.hinted == 0:
		return fmt.Sprintf(" The first %d of %s %d categories, in catalog order:", c.shownCount(), what, c.total)
	case c.grounded == 0:
		return fmt.Sprintf(" %d of %s %d categories, none sharing a word with the query:", c.shownCount(), what, c.total)
	case c.whole && c.grounded == c.total:
		return fmt.Sprintf(" %s %d categories, closest first:", capitalize(what), c.total)
	case c.whole:
		return fmt.Sprintf(" %s %d categories, the %d that share words with the query first, closest first, then the others:", capitalize(what), c.total, c.grounded)
	case c.grounded == c.shownCount():
		return fmt.Sprintf(" The %d closest of %s %d categories:", c.shownCount(), what, c.total)
	}
	return fmt.Sprintf(" %d of %s %d categories: the %d that share words with the query, closest first, then others:", c.shownCount(), what, c.total, c.grounded)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
