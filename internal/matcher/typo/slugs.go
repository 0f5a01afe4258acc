package typo

import "slices"

// Slugs returns the slugs a mistyped slug most likely meant: those within
// max(2, len(slug)/4) edits (Distance) of it, closest first, in the order
// given among equals.
//
// Most slugs are ruled out by a bound on the distance before it is
// computed: at 100,000 categories, computing it for every slug took 0.2 s
// a call.
func Slugs(typed string, slugs []string) []string {
	type near struct {
		slug string
		d    int
	}
	var found []near
	want := letterCounts(typed)
	for _, sl := range slugs {
		most := max(2, len(sl)/4)
		if abs(len(typed)-len(sl)) > most || !mayBeWithin(&want, sl, most) {
			continue
		}
		if d := Distance(typed, sl); d <= most {
			found = append(found, near{sl, d})
		}
	}
	slices.SortStableFunc(found, func(a, b near) int { return a.d - b.d })
	out := make([]string, len(found))
	for i, n := range found {
		out[i] = n.slug
	}
	return out
}

// letterCounts counts the bytes of a slug by kind: each letter, digit and
// the dash apart, anything else together.
func letterCounts(s string) [38]int {
	var c [38]int
	for i := 0; i < len(s); i++ {
		c[letterKind(s[i])]++
	}
	return c
}

func letterKind(b byte) int {
	switch {
	case b >= 'a' && b <= 'z':
		return int(b - 'a')
	case b >= '0' && b <= '9':
		return 26 + int(b-'0')
	case b == '-':
		return 36
	}
	return 37
}

// mayBeWithin is false when sl is surely more than most edits from the
// slug whose letterCounts are want. An insertion or a deletion changes
// the counts by one, a substitution by two, a transposition not at all,
// so the distance is at least half their difference.
func mayBeWithin(want *[38]int, sl string, most int) bool {
	diff := *want
	for i := 0; i < len(sl); i++ {
		diff[letterKind(sl[i])]--
	}
	off := 0
	for _, d := range diff {
		off += abs(d)
	}
	return (off+1)/2 <= most
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
