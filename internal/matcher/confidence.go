package matcher

import "fmt"

// doubt says why the evidence for category c does not make it a confident
// answer, or "" when it does. Coverage alone cannot tell these cases from
// good matches: each can explain most of a query's weight.
//
//   - Only the sources speak for it: every word met in c sits in a source's
//     name, host, "why" sentence or type, none in what the curator wrote
//     about the category itself. "docker" mentioned in a mail server's
//     why-line is not a question about mail servers.
//   - Only related words speak for it: nothing the asker wrote is in c, only
//     WordNet relatives of its words; enough to offer c as a candidate,
//     not to answer with it.
//   - One topic word among several the category does not explain: "rust
//     belt history" meets Learning Rust by "rust" alone, and "belt" and
//     "history" say the question is about something else. One unexplained
//     word is enough when it is a rare one (a name we do not know, likely
//     the topic: "terraform modules") and the word met does not name the
//     category; "hardening debian" is still Linux hardening, and so is a
//     query whose request word the curator used too ("postfix mail
//     setup" for a category whose patterns say "setup").
//
// A category met only through a source is still an answer when the query
// states that source's whole name or host ("bitwarden", "keepassxc",
// "lynis"): then phrase, the best short field's two-way coverage, is near 1
// and that field is a source's. A word that is only part of a source's name
// is not: "docker" is not a question about a mail server whose source is
// docker-mailserver.
//
// A category whose name and patterns hold none of the query's words, met
// only in its description or sources, is not an answer either when the
// query has words it does not explain ("web accessibility" is not Linux
// hardening for its description's "access").
//
// masks, when not nil, holds the fields of category c for each of the
// query's candidate terms, in p.candBuf order (see candMasks); without it
// each is looked up in the term's postings.
func (x *Index) doubt(p *parsed, c uint32, phrase float32, phraseField Field, masks []uint16) evidence {
	t := x.countWords(p, c, masks)
	switch {
	case t.met == 0 && t.unexplained > 0:
		return t.evidence(p, doubtGenericOnly)
	case t.met == 0:
		return t.evidence(p, sure) // a query of generic words only: coverage already says it
	case t.curated == 0 && phrase >= wholeSource && (phraseField == FieldSourceName || phraseField == FieldSourceHost):
		// The query is a source's whole name ("lynis", "bitwarden"): the
		// curator chose that very thing for this category, which is as
		// much their word as a pattern. Part of a name is not ("docker"
		// for docker-mailserver): phrase is then far below wholeSource.
		t.explained, t.explainedWeight, t.loose = t.met, p.total, 0
		return t.evidence(p, sure)
	case t.curated == 0:
		return t.evidence(p, doubtSourcesOnly)
	case t.direct == 0:
		return t.evidence(p, doubtRelatedOnly)
	case t.keyed == 0 && t.unexplained > 0:
		return t.evidence(p, doubtNotKeyed)
	case t.direct == 1 && (t.unexplained >= 2 && t.unexplained > t.met || t.rare >= 1 && !t.named && !t.genericMet):
		return t.evidence(p, doubtOneWord)
	}
	return t.evidence(p, sure)
}

// wordTally is what doubt counts of the query's words in one category.
type wordTally struct {
	met, direct, curated, keyed, unexplained, rare, explained, loose int
	explainedWeight                                                  float32
	aliens                                                           uint64 // unexplained words that are not ordinary English and that nothing in the category meets
	left                                                             uint64 // the words nothing in the category meets, by index
	patternOnly                                                      bool   // the (last) explained word is only in its patterns
	named                                                            bool   // a direct word is in the category's slug or name
	genericMet                                                       bool   // a generic word the query has is in what the curator wrote
	grounded                                                         bool   // a topic word meets it (see evidence.grounded)
}

// evidence is the verdict k with the counts of t.
func (t *wordTally) evidence(p *parsed, k doubtKind) evidence {
	share := float32(0)
	if p.total > 0 {
		share = t.explainedWeight / p.total
	}
	// A query of generic words only ("beginner guide") has nothing else
	// to share: a category whose curated words hold one of them has what
	// the query asks for, as much as any can.
	grounded := t.grounded || t.met+t.unexplained == 0 && t.genericMet
	return evidence{kind: k, keyed: t.keyed, unexplained: t.unexplained + t.loose, rare: t.rare, explained: t.explained, share: share, left: t.left, named: t.named, patternOnly: t.patternOnly, aliens: t.aliens, grounded: grounded}
}

// countWords counts, word by word, how the query's words meet category c.
func (x *Index) countWords(p *parsed, c uint32, masks []uint16) wordTally {
	var t wordTally
	k := 0 // w.cands[j] is p.candBuf[k+j]
	for i := range p.words {
		w := &p.words[i]
		kw := k
		k += len(w.cands)
		if w.generic {
			for j, cd := range w.cands {
				mask, ok := x.maskIn(masks, kw+j, cd.term, c)
				t.genericMet = t.genericMet || ok && w.kind != KindRelated && mask&curatedFields != 0
			}
			continue
		}
		var best float32
		var bestMask uint8
		var bestKind MatchKind
		for j, cd := range w.cands {
			mask, ok := x.maskIn(masks, kw+j, cd.term, c)
			if w.kind == KindRelated { // as fieldsFor
				mask &= curatedFields
				ok = ok && mask != 0
			}
			if v := cd.quality * x.strength[mask]; ok && v > best {
				best, bestMask, bestKind = v, mask, w.kind
			}
		}
		if best == 0 || bestKind == KindRelated && best < weakLink {
			t.unexplainedWord(i, w)
			continue
		}
		t.metWord(i, w, bestMask, bestKind)
	}
	return t
}

// unexplainedWord counts query word i, which nothing in the category
// explains. A loose link (a definition's word, a broader word) does not
// explain a word either: "insurance" defined with "application" says
// nothing about a visa application.
func (t *wordTally) unexplainedWord(i int, w *qword) {
	t.unexplained++
	t.left |= 1 << i
	if !w.common {
		t.aliens |= 1 << i // a name or term this category never mentions
	}
	if !w.common && len(w.cands) == 0 {
		t.rare++ // a name or term we do not know: likely the topic
	}
}

// metWord counts query word i, met in the fields of mask, as kind.
func (t *wordTally) metWord(i int, w *qword, mask uint8, kind MatchKind) {
	t.met++
	if kind != KindRelated {
		t.direct++
		t.named = t.named || mask&(1<<FieldSlug|1<<FieldName) != 0
	}
	if mask&curatedFields != 0 {
		t.curated++
	}
	if kind != KindRelated && mask&curatedFields != 0 {
		t.explained++
		t.explainedWeight += w.weight
		t.patternOnly = mask&curatedFields == 1<<FieldPattern
	} else {
		// Met, but only in what the sources say or through a related
		// word: enough to rank the category, not to be sure of it.
		// "node" in a why-line does not make node.js a PostgreSQL
		// question, nor does "compose" read as a word near "email"
		// make docker compose one about mail.
		t.loose++
		if !w.common {
			t.rare++
		}
		if kind == KindRelated {
			// A dictionary relative is no sign the word belongs to
			// this topic: it may still be a stranger to it.
			t.left |= 1 << i
		}
	}
	if mask&keyFields != 0 {
		t.keyed++
	}
	t.grounded = t.grounded || mask&curatedFields != 0 || kind != KindRelated && mask&sourceIDFields != 0
}

// maskIn is maskOf(t, c) for the k-th candidate term of the query, read
// from masks when there are any.
func (x *Index) maskIn(masks []uint16, k int, t, c uint32) (uint8, bool) {
	if masks != nil {
		v := masks[k]
		return uint8(v), v&maskPresent != 0
	}
	return x.maskOf(t, c)
}

// maskPresent marks, in candMasks, a term the category has.
const maskPresent = 1 << 8

// candMasks returns, for the categories about to be finished, the fields
// each has for each of the query's candidate terms: row i (len(p.candBuf)
// entries, maskPresent|mask or 0) is cats[i]'s. doubt would otherwise
// binary-search a term's postings per category and term; one walk of the
// postings serves every category. It returns nil when the postings are
// too long for that to pay, and doubt searches as before.
func (x *Index) candMasks(p *parsed, s *scratch, cats []qcand) []uint16 {
	k := len(p.candBuf)
	if k == 0 || len(cats) == 0 || len(cats) > 255 {
		return nil
	}
	total := 0
	for _, cd := range p.candBuf {
		total += int(x.postStart[cd.term+1] - x.postStart[cd.term])
	}
	if total > 2*len(cats)*k {
		return nil
	}
	need := len(cats) * k
	if cap(s.candMask) < need {
		s.candMask = make([]uint16, need)
	}
	rows := s.candMask[:need]
	clear(rows)
	for i, qc := range cats {
		s.posOf[qc.cat] = uint8(i + 1)
	}
	for j, cd := range p.candBuf {
		cs, ms := x.postings(cd.term)
		for n, c := range cs {
			if i := s.posOf[c]; i != 0 {
				rows[int(i-1)*k+j] = maskPresent | uint16(ms[n])
			}
		}
	}
	for _, qc := range cats {
		s.posOf[qc.cat] = 0
	}
	return rows
}

// doubtKind is why a category's evidence is too thin to answer with, or
// sure when it is not.
type doubtKind uint8

const (
	sure doubtKind = iota
	doubtGenericOnly
	doubtSourcesOnly
	doubtRelatedOnly
	doubtNotKeyed
	doubtOneWord
	// doubtVectorsOnly: no word of the query meets the category, and
	// only word vectors say it is close in meaning.
	doubtVectorsOnly
	numDoubtKinds
)

// evidence is what doubt found for one category: its verdict and the
// counts the confidence model reads: query words the curator's own words
// about it explain (its slug, name, patterns or description, met directly:
// exactly, by stem, typo, prefix or abbreviation), words met in the name,
// slug or patterns, words left unexplained (not met, or met only in its
// sources or through a related word), unexplained words too rare to be
// ordinary English (names and jargon: likely the topic), and the share of
// the query's weight the explained words carry.
type evidence struct {
	kind                                doubtKind
	explained, keyed, unexplained, rare int
	share                               float32 // of the query's weight, what the explained words carry
	left                                uint64  // bit i: nothing in the category meets query word i
	strangers                           int     // of those, words far in meaning from the category (best candidate only)
	named                               bool    // a query word meets its slug or name
	patternOnly                         bool    // the explained word (when one) is only in its patterns
	aliens                              uint64  // bit i: query word i is a name or term nothing in it meets
	farAliens                           int     // of those, the ones far in meaning from it and not misspelt English (best candidate only)
	// grounded: the category has evidence (Scored.Grounded): a query word
	// that is not a generic request word meets what the curator wrote
	// about it (slug, name, patterns, description), directly (same stem,
	// typo, prefix, abbreviation) or through a related word of strength
	// weakLink or more, or meets one of its sources' names or hosts
	// directly. A word met only in a source's why-line or type (prose
	// about a page: "patterns" in a regex tutorial's why is no sign of
	// knitting), a loose link, word vectors and the calibration's prior
	// are not evidence.
	grounded bool
}

func (e evidence) doubted() bool { return e.kind != sure }

// reason is the doubt in words, for explanations ("" when sure).
func (e evidence) reason() string {
	switch e.kind {
	case doubtGenericOnly:
		return "only generic words such as \"learn\" or \"guide\" meet it"
	case doubtSourcesOnly:
		return "met only through its sources' names, hosts or descriptions"
	case doubtRelatedOnly:
		return "met only through related words, none of the query's own"
	case doubtNotKeyed:
		return fmt.Sprintf("not in its name or patterns, and %d query words it does not explain", e.unexplained)
	case doubtOneWord:
		return fmt.Sprintf("one query word meets it and %d others it does not explain", e.unexplained)
	case doubtVectorsOnly:
		return "met only through words close in meaning (word vectors)"
	}
	return ""
}

// weakLink is the related-word strength below which a word is not counted
// as explained: links through definitions (glossQuality) and broader words.
const weakLink = 0.5

// wholeSource is the phrase score at which a query states a source's name.
const wholeSource = 0.8

// sourceIDFields name a source: what the curator chose, as opposed to
// the prose about it.
const sourceIDFields = 1<<FieldSourceName | 1<<FieldSourceHost

// keyFields are the curator's names for the category: what it is called
// and how people ask for it, as opposed to prose about it.
const keyFields = 1<<FieldSlug | 1<<FieldName | 1<<FieldPattern

// curatedFields are what the curator wrote about the category itself.
const curatedFields = 1<<FieldSlug | 1<<FieldName | 1<<FieldPattern | 1<<FieldDescription
