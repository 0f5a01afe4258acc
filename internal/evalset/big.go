package evalset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Big builds a registry of n categories: every category of the given sets
// (a slug two sets share is renamed SET-SLUG), then generated distractors
// up to n, and returns it as registry.json bytes with every set's
// questions, their expected slugs renamed to match. The distractors are
// written with real English words of middling frequency from the matcher's
// word list (internal/matcher/words/data/frequency.txt under root), so they
// share words, stems and word-vector neighbours with real questions as a
// large real registry's categories would. The same seed gives the same
// registry.
//
// Owner maps each curated category's slug to its set's name (distractors
// have none): the sets were written apart, so some of their topics
// overlap (two sets' "piano" and "piano-practice"; one set's off-topic
// mortgage question and another's mortgages category), and an answer on
// another set's category is neither plainly right nor plainly wrong.
type Large struct {
	Registry []byte
	Cases    []Case
	Owner    map[string]string
}

func Big(root string, sets []Set, n int, seed uint64) (*Large, error) {
	cats := map[string]json.RawMessage{}
	var cases []Case
	owner := map[string]string{}
	for _, s := range sets {
		data, err := os.ReadFile(s.Registry)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Categories map[string]json.RawMessage `json:"categories"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Registry, err)
		}
		rename := map[string]string{}
		for slug, c := range doc.Categories {
			to := slug
			if _, taken := owner[slug]; taken {
				to = s.Name + "-" + slug
			}
			owner[to] = s.Name
			rename[slug] = to
			cats[to] = c
		}
		qs, err := Read(s.Queries)
		if err != nil {
			return nil, err
		}
		for _, q := range qs {
			if q.OnTopic() {
				q.Want = rename[q.Want]
			}
			q.Shape = s.Name + "/" + q.Shape
			q.Set = s.Name
			cases = append(cases, q)
		}
	}
	words, err := middlingWords(filepath.Join(root, "internal", "matcher", "words", "data", "frequency.txt"))
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x51ed2701))
	for i := 0; len(cats) < n; i++ {
		slug, c := distractor(rng, words, i)
		if _, taken := cats[slug]; !taken {
			cats[slug] = c
		}
	}
	doc := map[string]any{
		"version":      "1.0.0",
		"updated":      "2026-11-25",
		"curator":      map[string]string{"name": "3gs evaluation, large", "pubkey": "pk:placeholder"},
		"endorsements": []any{},
		"categories":   cats,
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return &Large{Registry: out, Cases: cases, Owner: owner}, nil
}

// middlingWords are the list's plain lowercase words of 4 to 10 letters
// whose Zipf value is between 2.5 and 4.2: topic words, neither rare nor
// function words.
func middlingWords(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 || strings.HasPrefix(f[0], "#") || len(f[0]) < 4 || len(f[0]) > 10 {
			continue
		}
		z, err := strconv.ParseFloat(f[1], 64)
		if err != nil || z < 2.5 || z > 4.2 || strings.IndexFunc(f[0], func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
			continue
		}
		out = append(out, f[0])
	}
	if len(out) < 1000 {
		return nil, fmt.Errorf("%s: only %d usable words", path, len(out))
	}
	slices.Sort(out)
	return out, nil
}

// distractor writes one generated category: a topic of two or three
// words, named, described, asked about and sourced the way curators write.
func distractor(rng *rand.Rand, words []string, i int) (string, json.RawMessage) {
	pick := func() string { return words[rng.IntN(len(words))] }
	topic := []string{pick(), pick(), pick()}
	title := func(w string) string { return strings.ToUpper(w[:1]) + w[1:] }
	name := title(topic[0]) + " " + title(topic[1])
	desc := fmt.Sprintf("Getting started with %s %s: %s, %s and %s, with the %s most people ask about first.",
		topic[0], topic[1], topic[2], pick(), pick(), pick())
	patterns := []string{
		topic[0] + " " + topic[1],
		"how to " + pick() + " " + topic[0],
		topic[1] + " " + topic[2] + " guide",
		"best " + topic[0] + " " + pick(),
	}
	kinds := []string{"documentation", "tutorial", "article", "book", "forum", "video", "course"}
	var sources []map[string]any
	for r := 1; r <= 3; r++ {
		sources = append(sources, map[string]any{
			"rank": r,
			"name": title(topic[rng.IntN(2)]) + " " + title(pick()),
			"url":  fmt.Sprintf("https://www.%s%s.org/%d/", topic[r%3], pick(), i),
			"type": kinds[rng.IntN(len(kinds))],
			"why":  fmt.Sprintf("Clear on %s and %s, and kept up to date by people who %s.", topic[rng.IntN(3)], pick(), pick()),
		})
	}
	c, _ := json.Marshal(map[string]any{"name": name, "description": desc, "query_patterns": patterns, "sources": sources})
	return "gen-" + topic[0] + "-" + topic[1] + "-" + strconv.Itoa(i), c
}
