package testkit

import (
	"math/rand/v2"
	"strings"
)

// URLCorpus describes strings to hold a URL check to: every joining of a
// scheme, a host and a path, then Random strings that each start with one
// of the first RandomSchemes schemes and go on with up to 11 characters of
// Alphabet, drawn from a generator seeded with Seed.
type URLCorpus struct {
	Schemes, Hosts, Paths []string
	RandomSchemes         int
	Alphabet              string
	Random                int
	Seed                  [2]uint64
}

// Strings lists the corpus, the same list for the same description.
func (c URLCorpus) Strings() []string {
	var out []string
	for _, s := range c.Schemes {
		for _, h := range c.Hosts {
			for _, p := range c.Paths {
				out = append(out, s+h+p)
			}
		}
	}
	rng := rand.New(rand.NewPCG(c.Seed[0], c.Seed[1]))
	for range c.Random {
		var b strings.Builder
		b.WriteString(c.Schemes[rng.IntN(c.RandomSchemes)])
		for range rng.IntN(12) {
			b.WriteByte(c.Alphabet[rng.IntN(len(c.Alphabet))])
		}
		out = append(out, b.String())
	}
	return out
}
