package tools

import "strings"

// byLead describes up to describe of the only shelf's ranked categories
// that are grounded or near the query in meaning (matcher.Scored.Near),
// in the order of one key, matcher.Scored.Lead: the score plus how close
// the whole question's meaning is to the category's. A category near in
// meaning only so competes with weak word matches instead of waiting for
// the slots they leave: on the development sets' questions at 120
// categories (blend-dev), the right category was among the first five
// described for 0.636 of the not-confident on-topic questions (nearMargin
// 0.12), against 0.591 with the near ones after all the grounded. Those
// near in meaning only are marked so (listed.near). It stops at the first line that does
// not fit and reports whether the listing is full; the grounded not
// described are listed next by list's own phases.
func (ls *lister) byLead(describe int) (full bool) {
	ranked := ls.shelves[0].ranked
	// The best of the rest, one scan a slot: describe is ten at most, and
	// sorting a copy of the list cost an allocation of it per answer.
	taken := make([]bool, len(ranked))
	for len(ls.c.described) < describe {
		best := -1
		nearOK := len(ls.c.described) < maxCandidates // past the five an agent reads first, word matches only
		for i, r := range ranked {
			if !taken[i] && (r.Grounded || (nearOK && r.Near)) && (best < 0 || r.Lead > ranked[best].Lead) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		taken[best] = true
		r := ranked[best]
		if !ls.add(listed{slug: r.Slug, score: r.Score, near: !r.Grounded}, true) {
			return false // the rest by slug and name, as ranked does
		}
		if !r.Grounded {
			ls.c.near++
		}
	}
	return false
}

// meaningOnlyLine is the line of a described category close to the query
// in meaning only: "- slug (Name; close in meaning only, no shared word):
// what it covers". Its score is left out: it is no word match's, and
// the order already says where it stands.
func meaningOnlyLine(slug, name, description string) string {
	var b strings.Builder
	b.Grow(len(slug) + len(name) + len(description) + len(meaningOnlyMark) + 10)
	b.WriteString("\n- ")
	b.WriteString(slug)
	b.WriteString(" (")
	b.WriteString(name)
	b.WriteString(meaningOnlyMark)
	b.WriteString("): ")
	b.WriteString(description)
	return b.String()
}

// meaningOnlyMark follows the name of a described category close to the
// query in meaning only.
const meaningOnlyMark = "; close in meaning only"
