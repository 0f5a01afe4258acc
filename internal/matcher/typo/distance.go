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
// compared on the stack, allocating nothing; anything else goes through
// runeDistance.
func Distance(a, b string) int {
	n, m := len(a), len(b)
	if n > maxStackLen || m > maxStackLen || !isASCII(a) || !isASCII(b) {
		return runeDistance([]rune(a), []rune(b))
	}
	if n == 0 {
		return m
	}
	if m == 0 {
		return n
	}
	if a == b {
		return 0
	}
	var r0, r1, r2 [maxStackLen + 1]int32 // rows i-2, i-1 and i
	for j := range m + 1 {
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
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, r0[j-2]+1)
			}
			r2[j] = v
		}
		r0, r1 = r1, r2
	}
	return int(r1[m])
}

// maxStackLen is the longest word Distance compares on the stack.
const maxStackLen = 64

// runeDistance is Distance over runes, with the table's three live rows
// on the heap: for words too long for the stack, or not ASCII.
func runeDistance(a, b []rune) int {
	n, m := len(a), len(b)
	if n == 0 {
		return m
	}
	if m == 0 {
		return n
	}
	r0, r1, r2 := make([]int, m+1), make([]int, m+1), make([]int, m+1)
	for j := range r1 {
		r1[j] = j
	}
	for i := 1; i <= n; i++ {
		r2[0] = i
		for j := 1; j <= m; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(r1[j]+1, r2[j-1]+1, r1[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, r0[j-2]+1)
			}
			r2[j] = v
		}
		r0, r1, r2 = r1, r2, r0
	}
	return r1[m]
}

// Levenshtein is the Levenshtein distance between a and b: insertions,
// deletions and substitutions, no swaps. It is the plain
// dynamic-programming table, one row at a time: what the matcher's
// bit-parallel form (for words of up to 64 characters) falls back on, and
// what tests check that form against.
func Levenshtein(a, b []rune) int {
	n, m := len(a), len(b)
	if n == 0 {
		return m
	}
	if m == 0 {
		return n
	}
	prev, cur := make([]int, m+1), make([]int, m+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= n; i++ {
		cur[0] = i
		for j := 1; j <= m; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[m]
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
