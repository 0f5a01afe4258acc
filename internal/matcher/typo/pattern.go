package typo

// Pattern is a string prepared for bit-parallel Levenshtein distance
// (Myers 1999, in Hyyrö's formulation for the distance between whole
// strings): each text then costs a few word operations per character
// instead of a row of the table. The old matcher (Baseline) compares every
// query with every candidate of every category this way. It is a speed
// device, kept for what BenchmarkPattern measures on the benchmark mix
// (one question against the dev registry's 166 candidate strings; median
// of 5, go test -bench Pattern -count 5, 2 shared cores):
//
//	bit-parallel   154 µs/op    2.6 KB/op (long questions fall back)
//	table         1042 µs/op   30.7 KB/op
//
// Patterns past 64 characters, one machine word, are computed by the
// table (Levenshtein), which the tests check it against.
type Pattern struct {
	runes []rune
	ascii [128]uint64     // ascii[c]: bit i set where runes[i] == c
	other map[rune]uint64 // the same for other characters
	last  uint64          // bit of the pattern's last character
	fits  bool            // at most 64 characters: the bit-parallel form applies
}

// NewPattern prepares q.
func NewPattern(q []rune) *Pattern {
	p := new(Pattern)
	p.Init(q)
	return p
}

// Init prepares p for q. A caller may keep its Pattern on the stack: the
// masks are a kilobyte that would otherwise be garbage after every query.
func (p *Pattern) Init(q []rune) {
	*p = Pattern{runes: q, fits: len(q) > 0 && len(q) <= 64}
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

// Len is the pattern's length in runes.
func (p *Pattern) Len() int { return len(p.runes) }

func (p *Pattern) eq(r rune) uint64 {
	if r < 128 {
		return p.ascii[r]
	}
	return p.other[r]
}

// Distance is the Levenshtein distance between the pattern and t.
func (p *Pattern) Distance(t []rune) int {
	if !p.fits {
		return Levenshtein(p.runes, t)
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
