// Package typo is the matcher's spelling tolerance, kept apart from its
// scoring: edit distances between words, an index that finds the words
// within a small distance of another without comparing it with every one,
// and the slugs a mistyped slug most likely meant. It imports nothing of
// the project, so a caller that only needs a distance (a command-line
// flag's suggestion) does not pull in the matcher.
package typo

import "unicode/utf8"

// Distance is the optimal string alignment distance between a and b:
// Levenshtein (insertions, deletions, substitutions), plus the swap of two
// neighbouring characters as one edit, since "teh" is the commonest typo
// of all. Characters are runes. ASCII words of up to maxStackLen bytes are
// compared as bytes with the table on the stack, allocating nothing: the
// matcher's typo tolerance compares every query word with its candidates.
func Distance(a, b string) int {
	if a == b {
		return 0
	}
	if len(a) <= maxStackLen && len(b) <= maxStackLen && isASCII(a) && isASCII(b) {
		var ab, bb [maxStackLen]byte
		var rows [3 * (maxStackLen + 1)]int32
		return table(ab[:copy(ab[:], a)], bb[:copy(bb[:], b)], true, rows[:])
	}
	return table([]rune(a), []rune(b), true, nil)
}

// maxStackLen is the longest word Distance compares on the stack.
const maxStackLen = 64

// Levenshtein is the Levenshtein distance between a and b: insertions,
// deletions and substitutions, no swaps. Pattern computes it faster for
// patterns of up to 64 characters; this is what it falls back on past
// them, and what tests check it against.
func Levenshtein(a, b []rune) int { return table(a, b, false, nil) }

// table is the one edit-distance table of the package, computed a row at
// a time: the Levenshtein distance between a and b, and with swaps the
// optimal string alignment distance (a swap of neighbours is one edit).
// rows is room for three rows of len(b)+1, or nil to allocate them.
func table[E byte | rune](a, b []E, swaps bool, rows []int32) int {
	n, m := len(a), len(b)
	if n == 0 {
		return m
	}
	if m == 0 {
		return n
	}
	if len(rows) < 3*(m+1) {
		rows = make([]int32, 3*(m+1))
	}
	// Rows i-2, i-1 and i.
	r0, r1, r2 := rows[:m+1], rows[m+1:2*(m+1)], rows[2*(m+1):3*(m+1)]
	for j := range r1 {
		r1[j] = int32(j)
	}
	for i := 1; i <= n; i++ {
		r2[0] = int32(i)
		for j := 1; j <= m; j++ {
			cost := int32(1)
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(r1[j]+1, r2[j-1]+1, r1[j-1]+cost)
			if swaps && i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, r0[j-2]+1)
			}
			r2[j] = v
		}
		r0, r1, r2 = r1, r2, r0
	}
	return int(r1[m])
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
