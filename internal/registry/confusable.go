package registry

import (
	"strings"
	"unicode"
)

// A peer whose curator name reads as ours could pass its words off as
// ours to a reader who goes by names. Confusable compares two names as a
// reader sees them: Skeleton folds what does not change that.

// Confusable reports whether names a and b would read as the same name:
// equal once each is reduced to its Skeleton. A name with no letter or
// digit at all is confusable with nothing.
func Confusable(a, b string) bool {
	sa := Skeleton(a)
	return sa != "" && sa == Skeleton(b)
}

// Skeleton is name reduced to what a reader tells names apart by, much as
// NFKC with case folding and a table of look-alikes would: letters and
// digits only (spaces, punctuation, symbols, marks and hidden characters
// dropped), in lower case, accents removed from Latin letters, full-width,
// circled and mathematical letters and ligatures written as plain ones,
// Cyrillic and Greek letters that look Latin written as Latin, and 0, 1,
// i, rn and vv written as o, l, l, m and w. Two different names can share
// a skeleton; that is the point: it errs towards calling them alike.
func Skeleton(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		if s, ok := ligatures[r]; ok {
			b.WriteString(s)
			continue
		}
		r = plainLetter(r)
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			continue // spaces, punctuation, symbols, marks, hidden characters
		}
		b.WriteRune(lookAlike(r))
	}
	s := b.String()
	if strings.Contains(s, "rn") || strings.Contains(s, "vv") {
		s = strings.NewReplacer("rn", "m", "vv", "w").Replace(s)
	}
	return s
}

// plainLetter writes r as the plain lower-case letter or digit it is a
// form of, or returns r lower-cased.
func plainLetter(r rune) rune {
	switch {
	case r < 0x80:
		return unicode.ToLower(r)
	case 0xFF10 <= r && r <= 0xFF5A: // full-width digits and letters
		return unicode.ToLower(r - 0xFEE0)
	case 0x24B6 <= r && r <= 0x24CF: // circled capitals
		return 'a' + (r - 0x24B6)
	case 0x24D0 <= r && r <= 0x24E9: // circled small letters
		return 'a' + (r - 0x24D0)
	case 0x1D400 <= r && r <= 0x1D6A3: // mathematical letters, 52 a style
		if k := (r - 0x1D400) % 52; k < 26 {
			return 'a' + k
		} else {
			return 'a' + k - 26
		}
	case 0x1D7CE <= r && r <= 0x1D7FF: // mathematical digits, 10 a style
		return '0' + (r-0x1D7CE)%10
	}
	// Upper-case look-alikes are judged before lower-casing: Greek Η is
	// an H, though its small form η is an n.
	if l, ok := upperLookAlikes[r]; ok {
		return l
	}
	r = unicode.ToLower(r)
	if 0xC0 <= r && r < 0xC0+rune(len(latinBase)) && latinBase[r-0xC0] != '.' {
		return rune(latinBase[r-0xC0])
	}
	if 0x1E00 <= r && r < 0x1E00+rune(len(latinExtendedBase)) && latinExtendedBase[r-0x1E00] != '.' {
		return rune(latinExtendedBase[r-0x1E00])
	}
	return r
}

// lookAlike writes a lower-case letter or digit as the Latin letter it
// looks like, if any.
func lookAlike(r rune) rune {
	switch r {
	case '0':
		return 'o'
	case '1', 'i':
		return 'l'
	}
	if l, ok := lowerLookAlikes[r]; ok {
		return l
	}
	return r
}

// ligatures are the compatibility ligatures, written out.
var ligatures = map[rune]string{
	0xFB00: "ff", 0xFB01: "fl", 0xFB02: "fl", 0xFB03: "ffl", 0xFB04: "ffl", 0xFB05: "st", 0xFB06: "st",
	0x00C6: "ae", 0x00E6: "ae", 0x0152: "oe", 0x0153: "oe", 0x00DF: "ss", 0x0132: "lj", 0x0133: "lj",
}

// upperLookAlikes are Cyrillic and Greek capitals that look like a Latin
// capital, written as that letter in lower case.
var upperLookAlikes = map[rune]rune{
	'А': 'a', 'В': 'b', 'Е': 'e', 'Ѕ': 's', 'І': 'l', 'Ј': 'j', 'К': 'k', 'М': 'm', 'Н': 'h', 'О': 'o',
	'Р': 'p', 'С': 'c', 'Т': 't', 'Х': 'x', 'У': 'y', 'Ү': 'y', 'Ԁ': 'd', 'Ԛ': 'q', 'Ԝ': 'w',
	'Α': 'a', 'Β': 'b', 'Ε': 'e', 'Ζ': 'z', 'Η': 'h', 'Ι': 'l', 'Κ': 'k', 'Μ': 'm', 'Ν': 'n', 'Ο': 'o',
	'Ρ': 'p', 'Τ': 't', 'Υ': 'y', 'Χ': 'x',
}

// lowerLookAlikes are small letters of other scripts (and Latin ones
// without a decomposition) that look like a small Latin letter.
var lowerLookAlikes = map[rune]rune{
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'ѕ': 's', 'і': 'l', 'ї': 'l', 'ј': 'j', 'к': 'k', 'м': 'm',
	'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'һ': 'h', 'ԁ': 'd', 'ԛ': 'q',
	'ԝ': 'w', 'ү': 'y', 'ɡ': 'g', 'ı': 'l', 'ł': 'l', 'ø': 'o', 'đ': 'd', 'ħ': 'h',
	'α': 'a', 'β': 'b', 'ε': 'e', 'ι': 'l', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u',
	'χ': 'x', 'ω': 'w', 'ϲ': 'c', 'ϳ': 'j',
}

// latinBase is the base letter of each of U+00C0-U+024F (Latin-1
// Supplement, Latin Extended-A and -B) that is a Latin letter with marks
// ('.': none), from Unicode's compatibility decompositions.
const latinBase = "aaaaaa.ceeeeiiii.nooooo..uuuuy..aaaaaa.ceeeeiiii.nooooo..uuuuy.y" +
	"aaaaaaccccccccdd..eeeeeeeeeegggggggghh..iiiiiiiii.iijjkk.lllllll" +
	"l..nnnnnn...oooooo..rrrrrrsssssssstttt..uuuuuuuuuuuuwwyyyzzzzzzs" +
	"................................oo.............uu..............." +
	"....dddlllnnnaaiioouuuuuuuuuu.aaaa....ggkkoooo..jdddgg..nnaa...." +
	"aaaaeeeeiiiioooorrrruuuusstt..hh......aaeeooooooooyy............" +
	"................"

// latinExtendedBase is the same for U+1E00-U+1EFF (Latin Extended
// Additional).
const latinExtendedBase = "aabbbbbbccddddddddddeeeeeeeeeeffgghhhhhhhhhhiiiikkkkkkllllllllmm" +
	"mmmmnnnnnnnnoooooooopppprrrrrrrrssssssssssttttttttuuuuuuuuuuvvvv" +
	"wwwwwwwwwwxxxxyyzzzzzzhtwyas....aaaaaaaaaaaaaaaaaaaaaaaaeeeeeeee" +
	"eeeeeeeeiiiioooooooooooooooooooooooouuuuuuuuuuuuuuyyyyyyyy......"
