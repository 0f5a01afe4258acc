package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/matcher/typo"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
	"github.com/three-good-sources/3gs/internal/tooltable"
)

// GetSources implements gen.ToolHandlers.
func (h *Handlers) GetSources(ctx context.Context, in *gen.GetSourcesInput) (*gen.GetSourcesOutput, error) {
	threshold := h.threshold
	if in.Threshold != nil {
		threshold = *in.Threshold
	}
	s := h.cur.Load()
	// The empty output a withheld registry's error carries is made only
	// then: made for every call, it was an eighth of what one allocates.
	if st := h.signatureNow(s); st.Expired {
		return nil, h.withheldAt(st, &gen.GetSourcesOutput{Query: deref(in.Query), Sources: []gen.RankedSource{}})
	}
	out, err := h.getSources(s, in, threshold, tooltable.CatalogGiven(ctx))
	if err == nil {
		h.addHealth(out)
	}
	if h.qlog != nil {
		if e := logEntry(s, in, threshold, out, err); e != nil {
			e.Time = h.now().Truncate(time.Second)
			h.qlog.Record(e)
		}
	}
	return out, err
}

// addHealth gives each source of out what the last check of its URL
// found, when there was one.
func (h *Handlers) addHealth(out *gen.GetSourcesOutput) {
	ix := h.health.Load()
	if ix == nil {
		return
	}
	for i := range out.Sources {
		out.Sources[i].Health = healthOf(ix, out.Sources[i].URL)
	}
}

// healthOf is what the check ix records said of url, nil when ix has
// nothing on it (or is nil).
func healthOf(ix *sourcehealth.Index, url string) *gen.SourceHealth {
	e, ok := ix.Lookup(url)
	if !ok {
		return nil
	}
	return &gen.SourceHealth{Status: e.Status, CheckedAt: e.CheckedAt.UTC().Truncate(time.Second)}
}

// SetSourceHealth makes ix what get_sources says of each source's last
// check from now on; nil says nothing.
func (h *Handlers) SetSourceHealth(ix *sourcehealth.Index) { h.health.Store(ix) }

// appendHealthLine appends "last checked 3 days ago: gone".
func appendHealthLine(b []byte, sh *gen.SourceHealth, now time.Time) []byte {
	b = append(b, "last checked "...)
	b = append(b, sourcehealth.Ago(sh.CheckedAt, now)...)
	b = append(b, ": "...)
	return append(b, sh.Status...)
}

// allGone reports whether there are sources and every one was gone when
// last checked; health reads a source's health (get_sources' and
// get_federated_sources' sources are types of their own).
func allGone[S any](sources []S, health func(*S) *gen.SourceHealth) bool {
	for i := range sources {
		if h := health(&sources[i]); h == nil || h.Status != gen.CheckStatusGone {
			return false
		}
	}
	return len(sources) > 0
}

// logEntry is the query log's line for a get_sources call, or nil for a
// call that failed inside, or whose query was blank.
func logEntry(s *snapshot, in *gen.GetSourcesInput, threshold float64, out *gen.GetSourcesOutput, err error) *gen.QueryLog {
	e := &gen.QueryLog{Query: in.Query, Threshold: &threshold, RegistryVersion: s.reg.Version()}
	var te *gen.ToolError
	switch {
	case err == nil && in.Slug != nil:
		e.Outcome, e.Slug = gen.QueryLogOutcomeSlug, in.Slug
		return e
	case err == nil:
		e.Outcome, e.Slug, e.Score = gen.QueryLogOutcomeMatched, out.Slug, out.Score
		return e
	case !errors.As(err, &te):
		return nil
	}
	miss, _ := te.Structured.(*gen.GetSourcesOutput)
	if miss == nil {
		return nil
	}
	for _, c := range miss.Candidates {
		e.Candidates = append(e.Candidates, gen.ScoredSlug{Slug: c.Slug, Score: c.Score})
	}
	// A tool error comes from a call the decoder let through, which names
	// exactly one of slug and query.
	switch {
	case in.Slug != nil:
		e.Outcome, e.Slug = gen.QueryLogOutcomeUnknownSlug, in.Slug
	case strings.TrimSpace(*in.Query) == "":
		return nil // nothing a curator could add a pattern for
	case len(e.Candidates) > 0:
		e.Outcome, e.Score = gen.QueryLogOutcomeCandidates, &e.Candidates[0].Score
	default:
		e.Outcome = gen.QueryLogOutcomeNoCandidates
	}
	return e
}

// errNotOneOf answers a call that names neither query nor slug, or both.
// The decoder refuses those (the schema's oneOf) with -32602 before the
// handler runs, so only a caller that skipped it gets here; the Go type
// still allows the state, so it is answered rather than assumed away.
var errNotOneOf = errors.New("get_sources: arguments with neither or both of query and slug reached the handler; they must be decoded with gen.DecodeGetSourcesInput, which refuses them")

// given is the version of the catalog the caller's session was given
// (tooltable.CatalogGiven), "" when none.
func (h *Handlers) getSources(s *snapshot, in *gen.GetSourcesInput, threshold float64, given string) (*gen.GetSourcesOutput, error) {
	switch {
	case (in.Query == nil) == (in.Slug == nil):
		return nil, errNotOneOf
	case in.Slug != nil:
		return s.bySlug(*in.Slug)
	}
	query := *in.Query
	ranked, confident, err := matchFor(s.matcher, len(s.slugs), query, threshold)
	if text, ok := queryProblem(query, err); ok {
		return nil, &gen.ToolError{Text: text, Structured: &gen.GetSourcesOutput{Query: query, Sources: []gen.RankedSource{}}}
	} else if err != nil {
		return nil, err
	}
	if !confident {
		err := s.noMatch(query, ranked, threshold, given)
		if te := (*gen.ToolError)(nil); h.federates(s) && errors.As(err, &te) {
			te.Text += federationAdvice
		}
		return nil, err
	}
	best := ranked[0]
	out := s.answer(query, best.Slug, best.Score)
	out.Alternatives = s.alternatives(ranked[1:], threshold)
	return out, nil
}

// matchFor ranks the categories of a registry of size categories for
// query, as every answer does, and says whether the best is confident
// (at or above threshold). That is read from the five candidates the
// confidence model was fitted on: in a large registry a longer list prunes
// differently and can move the best's score. Only when it is not confident
// are the many a no-match listing shows ranked too, so a confident answer
// never pays for them.
//
// A matcher that can (matcher.MoreMatcher, as the server's Index can)
// ranks both lists from one analysis of the query: the same lists, for
// about a sixth less of a not-confident answer's cost.
func matchFor(m matcher.Matcher, size int, query string, threshold float64) (ranked []matcher.Scored, confident bool, err error) {
	if mm, ok := m.(matcher.MoreMatcher); ok {
		head, long, err := mm.MatchMore(query, maxCandidates, threshold, min(size, listedMost))
		switch {
		case err != nil:
			return nil, false, err
		case long == nil:
			return head, len(head) > 0 && head[0].Score >= threshold, nil
		}
		return long, false, nil
	}
	ranked, err = m.Match(query, maxCandidates)
	if err != nil {
		return nil, false, err
	}
	if len(ranked) > 0 && ranked[0].Score >= threshold {
		return ranked, true, nil
	}
	if more, err := m.Match(query, min(size, listedMost)); err == nil {
		ranked = more
	}
	return ranked, false, nil
}

// listedMost is how many categories, at most, a no-match answer ranks:
// all it can list within answerBudget, at about 20 bytes a slug in the
// compact list of a large registry.
const listedMost = answerBudget / 20

// queryProblem is what to tell the agent when the matcher finds nothing in
// its query to score: empty, or only stop words. ok is false for any other
// error (and for none).
func queryProblem(query string, err error) (text string, ok bool) {
	switch {
	case errors.Is(err, matcher.ErrEmptyQuery):
		return "Query cannot be empty. Describe the topic in a few words, for example \"learn rust\" or \"harden a linux server\".", true
	case errors.Is(err, matcher.ErrOnlyStopWords):
		return "Query '" + query + "' has only common words (such as how, do, I, the), which say nothing about a topic. Name the topic itself, for example \"kubernetes\" or \"password manager\".", true
	}
	return "", false
}

// answer is a found category with its sources.
func (s *snapshot) answer(query, slug string, score float64) *gen.GetSourcesOutput {
	c, _ := s.reg.Category(slug)
	cur := s.reg.Curator()
	// One allocation holds the output and everything it points to: this
	// runs on every answered call, and separate small objects (the score,
	// the version, the curator, a growing sources slice) were most of its
	// garbage.
	a := &answerAlloc{score: score, version: s.reg.Version(), curator: gen.AnsweringCurator{Name: cur.Name, Pubkey: cur.Pubkey}}
	a.out = gen.GetSourcesOutput{
		Query:           query,
		Slug:            &c.Slug,
		Name:            &c.Name,
		Description:     &c.Description,
		Score:           &a.score,
		RegistryVersion: &a.version,
		Curator:         &a.curator,
	}
	sources := a.sources[:0]
	if len(c.Sources) > len(a.sources) {
		sources = make([]gen.RankedSource, 0, len(c.Sources))
	}
	for _, s := range c.Sources {
		sources = append(sources, gen.RankedSource{Rank: s.Rank, Name: s.Name, URL: s.URL, Type: string(s.Type), Why: s.Why})
	}
	if len(sources) > 0 {
		a.out.Sources = sources
	}
	return &a.out
}

// answerAlloc is an answer with what its pointers point to.
type answerAlloc struct {
	out     gen.GetSourcesOutput
	score   float64
	version string
	curator gen.AnsweringCurator
	sources [3]gen.RankedSource // a category has three
}

// bySlug answers a call that names its category: the agent chose it from
// candidates or list_categories, so it gets that category with score 1.
// A slug that does not exist gets the closest ones, spelled alike or
// about the same words.
func (s *snapshot) bySlug(slug string) (*gen.GetSourcesOutput, error) {
	if _, ok := s.reg.Category(slug); ok {
		return s.answer("", slug, 1), nil
	}
	out := &gen.GetSourcesOutput{Query: "", Sources: []gen.RankedSource{}, CategoryCount: ptr(len(s.slugs))}
	seen := map[string]bool{}
	add := func(sl string, score float64) {
		if len(out.Candidates) < maxCandidates && !seen[sl] {
			seen[sl] = true
			out.Candidates = append(out.Candidates, s.candidate(sl, score))
		}
	}
	for _, sl := range typo.Slugs(slug, s.slugs) {
		add(sl, 0)
	}
	if ranked, err := s.matcher.Match(strings.ReplaceAll(slug, "-", " "), maxCandidates); err == nil {
		for _, r := range grounded(ranked) {
			add(r.Slug, r.Score)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "No category has the slug %q.", slug)
	if len(out.Candidates) > 0 {
		fmt.Fprintf(&b, " Closest of the registry's %d categories:", len(s.slugs))
		writeCandidates(&b, out.Candidates)
		b.WriteString("\nCall get_sources with one of these slugs, or with query to search by topic.")
	} else {
		fmt.Fprintf(&b, " Call list_categories to page through the registry's %d categories, or get_sources with query to search by topic.", len(s.slugs))
	}
	return nil, &gen.ToolError{Text: b.String(), Structured: out}
}

// maxCandidates is how many categories a no-match answer describes (one
// line of what each covers), and how many an unknown slug is offered;
// maxCandidatesLarge, in a registry too large to list whole.
const (
	maxCandidates      = 5
	maxCandidatesLarge = 10
)

// maxAlternatives is how many runner-up categories get_sources names.
const maxAlternatives = 2

// alternatives are the runner-ups worth offering: those the matcher has
// evidence for scoring above half the threshold. Below that they are
// noise, not near misses.
func (s *snapshot) alternatives(rest []matcher.Scored, threshold float64) []gen.AlternativeCategory {
	var out []gen.AlternativeCategory
	n := 0 // the grounded met
	for _, r := range rest {
		if !r.Grounded {
			continue
		}
		if n == maxAlternatives || r.Score <= threshold/2 {
			break
		}
		n++
		c, _ := s.reg.Category(r.Slug)
		out = append(out, gen.AlternativeCategory{Slug: r.Slug, Name: c.Name, Score: r.Score})
	}
	return out
}

// grounded are the categories of ranked the matcher has evidence for, in
// its order: the only ones offered as candidates or called close.
func grounded(ranked []matcher.Scored) []matcher.Scored {
	out := make([]matcher.Scored, 0, len(ranked))
	for _, r := range ranked {
		if r.Grounded {
			out = append(out, r)
		}
	}
	return out
}

func (s *snapshot) candidate(slug string, score float64) gen.CandidateCategory {
	c, _ := s.reg.Category(slug)
	return gen.CandidateCategory{Slug: slug, Name: c.Name, Description: firstLine(c.Description), Score: score}
}

// firstLine is a description cut to its first sentence or line, so five
// candidates stay short enough to read at a glance.
func firstLine(d string) string {
	if i := strings.IndexByte(d, '\n'); i >= 0 {
		d = d[:i]
	}
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	return d
}

// minShownScore is the lowest score a listed candidate's line shows: below
// it the figure says nothing an agent can use, and the order already says
// which is closer.
const minShownScore = 0.1

func writeCandidates(b *strings.Builder, cs []gen.CandidateCategory) {
	for _, c := range cs {
		if c.MeaningOnly != nil && *c.MeaningOnly {
			b.WriteString(meaningOnlyLine(c.Slug, c.Name, c.Description))
			continue
		}
		b.WriteString(candidateLine(c.Slug, c.Name, c.Description, c.Score))
	}
}

// noMatch puts the registry in front of the agent instead of an answer:
// it reads meaning better than the matcher, so it picks the right category
// whenever it can see it. The categories the query shares words with come
// closest first (list): the best with what they cover (candidates), then
// as many more by slug and name as fit in the answer's budget
// (more_categories), the others in catalog order, which is the whole
// registry up to about 80 categories. A larger registry gets its closest
// ones and how to browse the rest. When the query shares nothing with
// any category, the answer says so, offers no candidate and lists the
// catalog in its order.
//
// When the caller's session was given this registry's catalog in its
// instructions (given is its version), the answer lists the described
// candidates only and points at the catalog for the rest: the agent has
// read it already. It names list_categories as well, for a host that does
// not show the model the instructions: the model must not take the
// candidates for all there is. A session given the catalog of an earlier
// registry (the registry was reloaded or edited since it began) gets the
// list, and is told its catalog is out of date.
func (s *snapshot) noMatch(query string, ranked []matcher.Scored, threshold float64, given string) error {
	out := &gen.GetSourcesOutput{Query: query, Sources: []gen.RankedSource{}, CategoryCount: ptr(len(s.slugs))}
	// The opening is written first, as the room it leaves decides the
	// listing; the answer's text is then made once at its exact size
	// (answerText). Growing it to the whole budget up front allocated
	// 4,000 bytes for answers that are mostly a third of that.
	var b strings.Builder
	b.Grow(len(query) + openingRoom)
	// Written in parts, not through fmt: every not-confident answer
	// starts so, and formatting it was a tenth of the rendering (noMatch).
	b.WriteString("No category matches query '")
	writeOneLine(&b, query, 500)
	b.WriteString("' confidently (a score of at least ")
	b.WriteString(strconv.FormatFloat(threshold, 'f', -1, 64))
	b.WriteString(" is needed).")
	// The first grounded, found in place: a copy of the grounded of a
	// long ranked list was an allocation of it on every such answer.
	if i := slices.IndexFunc(ranked, func(r matcher.Scored) bool { return r.Grounded }); i >= 0 {
		out.Closest = &gen.ClosestCategory{Slug: ranked[i].Slug, Score: ranked[i].Score}
		out.Alternatives = s.alternatives(ranked[i+1:], threshold)
	} else {
		b.WriteString(" No category shares anything with it: none of the registry's ")
		b.WriteString(strconv.Itoa(len(s.slugs)))
		b.WriteString(" has a word of the query, or one related to it, in what its curator wrote about it, so there are no candidates.")
	}
	v := ""
	if given != "" {
		v = catalogVersion(s)
	}
	if given != "" && given != v {
		fmt.Fprintf(&b, " The registry changed since this session began (the session's catalog is of registry %s, this one is %s), so this answer lists its categories instead of pointing at it.", oneLine(given, 100), v)
	}
	// The room left after what comes before the list: the advice, the
	// longer of its two endings, and the heading.
	room := answerBudget - b.Len() - len(pickAdvice) - max(len(wholeAdvice), len(partialAdvice)) - headingRoom
	shelves := []shelf{{reg: s.reg, ranked: ranked, visible: s.visible, lineBytes: s.lineBytes, index: s.index}}
	atHand := given != "" && given == v
	var c catalog
	if atHand {
		c = describedNear(shelves, room)
	} else {
		c = listNear(shelves, room, true)
	}
	if len(c.described) > 0 {
		out.Candidates = make([]gen.CandidateCategory, 0, len(c.described))
	}
	for _, l := range c.described {
		cc := gen.CandidateCategory{Slug: l.slug, Name: l.cat.Name, Description: firstLine(l.cat.Description), Score: l.score}
		if l.near {
			cc.MeaningOnly = ptr(true)
		}
		out.Candidates = append(out.Candidates, cc)
	}
	if atHand {
		// A copy of its own: taking v's address would move it to the heap
		// on every no-match answer.
		cv := v
		out.CatalogVersion = &cv
		var t strings.Builder
		answerText(&t, &b, len(pickAdvice)+catalogAdviceRoom+len(v)+len(wholeAdvice)+len(" The closest:")+c.describedSize)
		if len(out.Candidates) > 0 {
			t.WriteString(pickAdvice)
			fmt.Fprintf(&t, "Or pick one from the catalog of categories in this server's instructions (registry %s): it lists all %d, as list_categories does. ", v, len(s.slugs))
		} else {
			fmt.Fprintf(&t, " The catalog of categories in this server's instructions (registry %s) lists all %d, as list_categories does: pick the one that fits the question and call get_sources with its slug. ", v, len(s.slugs))
		}
		t.WriteString(wholeAdvice)
		if len(out.Candidates) > 0 {
			t.WriteString(" The closest:")
			c.writeDescribedLines(&t)
		}
		return &gen.ToolError{Text: t.String(), Structured: out}
	}
	if more := c.moreForStructure(); len(more) > 0 {
		out.MoreCategories = make([]gen.ListedCategory, len(more))
		for i, l := range more {
			out.MoreCategories[i] = gen.ListedCategory{Slug: l.slug, Name: l.cat.Name}
		}
	}
	// What to do comes before the list, so an agent reads it first.
	var t strings.Builder
	answerText(&t, &b, len(pickAdvice)+max(len(wholeAdvice), len(partialAdvice))+headingRoom+c.size)
	t.WriteString(pickAdvice)
	if c.whole {
		t.WriteString(wholeAdvice)
	} else {
		t.WriteString(partialAdvice)
	}
	t.WriteString(c.heading("the registry's"))
	c.writeText(&t)
	return &gen.ToolError{Text: t.String(), Structured: out}
}

// openingRoom is what a no-match answer's opening takes besides the
// query: its sentences, and the one saying the session's catalog is out
// of date, with two registry versions. More only costs a second growth.
const openingRoom = 640

// catalogAdviceRoom is what the sentence pointing at the catalog in the
// instructions takes besides the registry version.
const catalogAdviceRoom = 220

// answerText starts t, empty, with the opening written to b and room for
// rest bytes more: the answer's text in one allocation of about its
// size, as the opening was written before the rest's size was known.
func answerText(t, b *strings.Builder, rest int) {
	t.Grow(b.Len() + rest)
	t.WriteString(b.String())
}

// What a no-match answer says to do, before its list: pick, then what to
// do when nothing fits, as the list is the whole registry or not.
const (
	pickAdvice    = " Pick the category below that fits the question and call get_sources with its slug. "
	wholeAdvice   = "If none does, this registry does not cover the topic: say so rather than pick the nearest."
	partialAdvice = "If none does, call list_categories with filter set to a word of the topic to look through the rest; if nothing fits there either, this registry does not cover it."
)

// federationAdvice ends a no-match answer of a node that follows the
// curators its registry endorses: their registries may cover what this
// one does not, and only get_federated_sources asks them.
const federationAdvice = "\nCurators this registry's curator endorses may cover it: get_federated_sources asks their registries too, with the same query."

// federates reports whether this node asks the curators s's registry
// endorses (get_federated_sources has someone to ask).
func (h *Handlers) federates(s *snapshot) bool {
	return h.peers != nil && len(s.reg.Endorsements()) > 0
}

// headingRoom is the most bytes a listing's heading (catalog.heading)
// takes for the registry's, at any count below a million.
const headingRoom = 120

// answerBudget is the most text a no-match answer writes: the agent pays
// for every byte on every call. At the length curators give slugs and
// names (about 45 bytes a line), it holds the whole list of a registry of
// about 80 categories after five described ones.
const answerBudget = 4000

// wholeCatalog is the most categories a registry can have for its
// no-match answers to aim at listing them all; a larger one describes
// more candidates (maxCandidatesLarge), as the list cannot be whole.
const wholeCatalog = 100

// sureScore is the confidence from which an answer's text no longer says
// what to do when the category does not fit.
const sureScore = 0.9

// getSourcesTextSize is at least the length of GetSourcesText's answer
// for out, so that its text is built in one allocation.
func getSourcesTextSize(out *gen.GetSourcesOutput) int {
	n := 256 + len(deref(out.Name)) + len(deref(out.Slug)) + len(deref(out.Description)) + len(deref(out.RegistryVersion))
	if out.Curator != nil {
		n += len(out.Curator.Name) + len(out.Curator.Pubkey)
	}
	for _, s := range out.Sources {
		n += 48 + len(s.Name) + len(s.URL) + len(s.Type) + len(s.Why)
		if s.Health != nil {
			n += 200 // the health line, and the warning when all are gone
		}
	}
	for _, a := range out.Alternatives {
		n += 24 + len(a.Slug) + len(a.Name)
	}
	return n
}

// GetSourcesText is AppendGetSourcesText's answer as a string, for
// callers that want one (3gs query). It copies the text once: an
// unsafe.String of the buffer saved no measurable byte per request on the
// benchmark mix (mcp BenchmarkHandle/mix-v1), as the transports never call
// it.
func (h *Handlers) GetSourcesText(out *gen.GetSourcesOutput) string {
	return string(h.AppendGetSourcesText(make([]byte, 0, getSourcesTextSize(out)), out))
}

// AppendGetSourcesText implements gen.ToolHandlers: it appends the text
// of a get_sources answer to b. It is on every get_sources call, so it
// appends rather than formats, and the transport has it write into the
// response's buffer, making no string of it.
func (h *Handlers) AppendGetSourcesText(b []byte, out *gen.GetSourcesOutput) []byte {
	line := func(label, value string) {
		b = append(b, label...)
		b = append(b, value...)
		b = append(b, '\n')
	}
	if allGone(out.Sources, func(s *gen.RankedSource) *gen.SourceHealth { return s.Health }) {
		b = append(b, "Warning: all "...)
		b = strconv.AppendInt(b, int64(len(out.Sources)), 10)
		b = append(b, " sources of this category were gone when last checked ("...)
		b = appendHealthLine(b, out.Sources[0].Health, time.Now())
		b = append(b, "); tell the user, and look elsewhere too.\n\n"...)
	}
	// The registry's text, passed through Visible: the loader refuses
	// what it drops, so it copies nothing unless that check was bypassed.
	line("Category: ", registry.Visible(deref(out.Name)))
	line("Slug: ", deref(out.Slug))
	line("Description: ", registry.Visible(deref(out.Description)))
	b = append(b, "Match Score: "...)
	b = appendScore(b, deref(out.Score))
	b = append(b, '\n')
	line("Registry Version: ", registry.Visible(deref(out.RegistryVersion)))
	b = append(b, "Curator: "...)
	b = append(b, registry.Visible(out.Curator.Name)...)
	b = append(b, " ("...)
	b = append(b, out.Curator.Pubkey...)
	b = append(b, ")\n"...)
	b = append(b, "\nSources:"...)
	for _, s := range out.Sources {
		b = append(b, '\n')
		b = strconv.AppendInt(b, int64(s.Rank), 10)
		line(". ", registry.Visible(s.Name))
		line("   URL: ", registry.Visible(s.URL))
		line("   Type: ", s.Type)
		b = append(b, "   Why: "...)
		b = append(b, registry.Visible(s.Why)...)
		if s.Health != nil {
			b = append(b, "\n   Health: "...)
			b = appendHealthLine(b, s.Health, time.Now())
		}
	}
	if out.Score != nil && *out.Score < sureScore && out.Query != "" {
		b = append(b, "\n\nIf this category does not fit the question, call list_categories to see what the registry covers."...)
	}
	if len(out.Alternatives) > 0 {
		b = append(b, "\n\nAlso close:"...)
		for _, a := range out.Alternatives {
			b = append(b, "\n- "...)
			b = append(b, a.Slug...)
			b = append(b, " ("...)
			b = append(b, registry.Visible(a.Name)...)
			b = append(b, ", score: "...)
			b = appendScore(b, a.Score)
			b = append(b, ')')
		}
	}
	return b
}
