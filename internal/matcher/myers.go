package matcher

import "github.com/three-good-sources/3gs/internal/matcher/typo"

// pattern is a query prepared for bit-parallel edit distance (Myers 1999,
// in Hyyrö's formulation for the distance between whole strings). Each
// candidate then costs a few word operations per character instead of a
// full dynamic-programming table, which matters because every query is
// compared with every candidate of every category.
//
// typo.Levenshtein computes the table, for patterns too long for one
// machine word; the bit-parallel form is tested against it.
type pattern struct {
	runes []rune
	ascii [128]uint64     // ascii[c]: bit i set where runes[i] == c
	other map[rune]uint64 // the same for other characters
	last  uint64          // bit of the pattern's last character
	fits  bool            // at most 64 characters: the bit-parallel form applies
}

func newPattern(q []rune) *pattern {
	p := new(pattern)
	p.init(q)
	return p
}

// init prepares p for q. Match keeps its pattern on the stack: the masks
// are a kilobyte that would otherwise be garbage after every query.
func (p *pattern) init(q []rune) {
	*p = pattern{runes: q, fits: len(q) > 0 && len(q) <= 64}
	if !p.fits {
		return
	}
	for i, r := range q {
		if r < 128 {
			p.ascii[r] |= 1 << i
		} else {
			if p.other == nil {
				p.other = map[rune]uint64{}
			}
			p.other[r] |= 1 << i
		}
	}
	p.last = 1 << (len(q) - 1)
}

func (p *pattern) eq(r rune) uint64 {
	if r < 128 {
		return p.ascii[r]
	}
	return p.other[r]
}

// distance is the Levenshtein distance between the pattern and t.
func (p *pattern) distance(t []rune) int {
	if !p.fits {
		return typo.Levenshtein(p.runes, t)
	}
	m := len(p.runes)
	vp := ^uint64(0) >> (64 - m) // vertical deltas +1 down the first column
	var vn uint64
	dist := m
	for _, r := range t {
		x := p.eq(r) | vn
		d0 := (((x & vp) + vp) ^ vp) | x
		hp := vn | ^(d0 | vp)
		hn := vp & d0
		if hp&p.last != 0 {
			dist++
		} else if hn&p.last != 0 {
			dist--
		}
		hp = hp<<1 | 1 // the first row grows by one per text character
		hn <<= 1
		vp = hn | ^(d0 | hp)
		vn = hp & d0
	}
	return dist
}
