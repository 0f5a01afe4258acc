package matcher

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/registry"
)

// synthRegistry generates n categories that look like curated ones: each
// has a few topic words of its own (drawn from a large pseudo-word
// vocabulary, so topics overlap only as often as real ones do), and its
// text mixes them with common words drawn from a Zipf distribution, the way
// "guide", "server" or "security" recur across a real registry. Every
// category has a slug, name, description, 4 query patterns and 3 sources.
// The same seed gives the same registry.
type synth struct {
	rng    *rand.Rand
	topic  []string // rare words, topics draw from these: n+20,000 for n categories, so a large registry has a vocabulary of the size real text of that length has (Heaps' law)
	common []string // frequent words, Zipf-distributed
	zipf   *rand.Zipf
}

func newSynth(seed uint64, topicWords int) *synth {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := &synth{rng: rng}
	seen := map[string]bool{}
	word := func() string {
		for {
			var b strings.Builder
			for range 2 + rng.IntN(3) {
				b.WriteString(syllables[rng.IntN(len(syllables))])
			}
			w := b.String()
			if !seen[w] {
				seen[w] = true
				return w
			}
		}
	}
	for range topicWords {
		s.topic = append(s.topic, word())
	}
	for range 3000 {
		s.common = append(s.common, word())
	}
	// math/rand/v2 has no Zipf; the v1 one is seeded from our generator.
	s.zipf = rand.NewZipf(rand.New(rng), 1.1, 1, uint64(len(s.common)-1))
	return s
}

var syllables = strings.Fields("ka lo mi ne ru sa ti vo be da fi go hu je ko la mu ni po re si tu va wi ze bra cle dro fla gri plo sta tre vel mon tar ser lin dex ph qu ax or en is an")

func (s *synth) text(topic []string, words int, topicShare float64) string {
	out := make([]string, words)
	for i := range out {
		if s.rng.Float64() < topicShare {
			out[i] = topic[s.rng.IntN(len(topic))]
		} else {
			out[i] = s.common[s.zipf.Uint64()]
		}
	}
	return strings.Join(out, " ")
}

func (s *synth) categories(n int) []registry.Category {
	types := []gen.SourceType{gen.SourceTypeDocumentation, gen.SourceTypeTool, gen.SourceTypeTutorial, gen.SourceTypeBook, gen.SourceTypeRepo}
	cats := make([]registry.Category, n)
	for i := range cats {
		topic := make([]string, 3+s.rng.IntN(3))
		for j := range topic {
			topic[j] = s.topic[s.rng.IntN(len(s.topic))]
		}
		c := &gen.Category{
			Name:        s.text(topic, 2+s.rng.IntN(2), 0.6),
			Description: s.text(topic, 15+s.rng.IntN(10), 0.25),
		}
		for range 4 {
			c.QueryPatterns = append(c.QueryPatterns, s.text(topic, 3+s.rng.IntN(4), 0.4))
		}
		for r := 1; r <= 3; r++ {
			host := topic[s.rng.IntN(len(topic))] // most sites are named for their topic
			if s.rng.IntN(2) == 0 {
				host += "-" + s.common[s.zipf.Uint64()]
			}
			c.Sources = append(c.Sources, gen.Source{
				Rank: r,
				Name: s.text(topic, 2+s.rng.IntN(3), 0.5),
				URL:  "https://" + host + ".org/docs/",
				Type: types[s.rng.IntN(len(types))],
				Why:  s.text(topic, 12+s.rng.IntN(10), 0.2),
			})
		}
		cats[i] = registry.Category{Slug: topic[0] + "-" + strconv.Itoa(i), Category: c}
	}
	return cats
}

// queries returns n queries about random categories of cats: a few of each
// category's words, sometimes with a common word, a typo or an unknown word.
func (s *synth) queries(cats []registry.Category, n int) []string {
	out := make([]string, n)
	for i := range out {
		c := cats[s.rng.IntN(len(cats))]
		words := strings.Fields(c.QueryPatterns[s.rng.IntN(len(c.QueryPatterns))])
		q := words[:1+s.rng.IntN(len(words))]
		switch s.rng.IntN(4) {
		case 0: // a typo: swap two letters of the first word
			if w := []byte(q[0]); len(w) > 4 {
				w[1], w[2] = w[2], w[1]
				q[0] = string(w)
			}
		case 1:
			q = append(q, "zyxwv")
		}
		out[i] = strings.Join(q, " ")
	}
	return out
}
