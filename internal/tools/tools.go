// Package tools is the logic of the registry tools: it implements the
// gen.ToolHandlers interface that the schemas under schema/tools/ declare,
// over one immutable registry snapshot and its matcher.
package tools

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hbollon/go-edlib"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// DefaultThreshold is the lowest match score get_sources accepts when
// neither the server (MATCH_THRESHOLD) nor the call sets one.
const DefaultThreshold = 0.4

// Handlers serves the tools. What they read is one immutable snapshot,
// swapped whole when an admin tool changes the registry, so a request that
// started on the old registry finishes on it and no request sees half a
// change.
type Handlers struct {
	cur       atomic.Pointer[snapshot]
	threshold float64
	edit      *editor  // nil when the registry has no file to write
	qlog      Recorder // nil: no query log
	now       func() time.Time
}

var _ gen.ToolHandlers = (*Handlers)(nil)

// snapshot is a registry with everything derived from it.
type snapshot struct {
	reg       *registry.Registry
	matcher   matcher.Matcher
	signature signature.Status
	files     signature.Files
	slugs     []string // sorted, for no-match answers
	// modified is when these bytes became the registry: the file's
	// modification time, or the moment a change was written.
	modified time.Time
}

func newSnapshot(reg *registry.Registry, m matcher.Matcher, st signature.Status, files signature.Files, modified time.Time) *snapshot {
	s := &snapshot{reg: reg, matcher: m, signature: st, files: files, modified: modified}
	for _, cat := range reg.Categories() {
		s.slugs = append(s.slugs, cat.Slug)
	}
	return s
}

// Config is what the handlers serve.
type Config struct {
	Registry *registry.Registry
	Matcher  matcher.Matcher
	// Threshold is the server's default for get_sources.
	Threshold float64
	// Signature is the outcome of checking the registry's signature file;
	// the zero value means there is none.
	Signature signature.Status
	// Files names the registry and signature files in get_provenance's
	// verification steps.
	Files signature.Files
	// Edit, when set, lets the admin tools change the registry file.
	Edit *EditConfig
	// Modified is when the registry's bytes were last changed (the file's
	// modification time); zero when unknown.
	Modified time.Time
	// QueryLog, when set, gets a line for every get_sources call that names
	// a query or a slug (3gs serve --query-log).
	QueryLog Recorder
	// Now is the clock for the query log; nil means time.Now.
	Now func() time.Time
}

// Recorder keeps the query log (querylog.Log).
type Recorder interface {
	Record(*gen.Querylog)
}

// New returns handlers for c.
func New(c Config) *Handlers {
	h := &Handlers{threshold: c.Threshold, qlog: c.QueryLog, now: c.Now}
	if h.now == nil {
		h.now = time.Now
	}
	h.cur.Store(newSnapshot(c.Registry, c.Matcher, c.Signature, c.Files, c.Modified))
	if c.Edit != nil {
		h.edit = newEditor(*c.Edit)
	}
	return h
}

// GetSources implements gen.ToolHandlers.
func (h *Handlers) GetSources(_ context.Context, in *gen.GetSourcesInput) (*gen.GetSourcesOutput, error) {
	threshold := h.threshold
	if in.Threshold != nil {
		threshold = *in.Threshold
	}
	s := h.cur.Load()
	out, err := h.getSources(s, in, threshold)
	if h.qlog != nil {
		if e := logEntry(s, in, threshold, out, err); e != nil {
			e.Time = h.now().UTC().Format(time.RFC3339)
			h.qlog.Record(e)
		}
	}
	return out, err
}

// logEntry is the query log's line for a get_sources call, or nil for a
// call that named neither a query nor a slug, or failed inside.
func logEntry(s *snapshot, in *gen.GetSourcesInput, threshold float64, out *gen.GetSourcesOutput, err error) *gen.Querylog {
	e := &gen.Querylog{Query: in.Query, Threshold: &threshold, RegistryVersion: s.reg.Version()}
	var te *gen.ToolError
	switch {
	case err == nil && in.Slug != nil:
		e.Outcome, e.Slug = gen.QuerylogOutcomeSlug, in.Slug
		return e
	case err == nil:
		e.Outcome, e.Slug, e.Score = gen.QuerylogOutcomeMatched, out.Slug, out.Score
		return e
	case !errors.As(err, &te):
		return nil
	}
	miss, _ := te.Structured.(*gen.GetSourcesOutput)
	if miss == nil || in.Query != nil && in.Slug != nil || in.Query == nil && in.Slug == nil {
		return nil
	}
	for _, c := range miss.Candidates {
		e.Candidates = append(e.Candidates, gen.ScoredSlug{Slug: c.Slug, Score: c.Score})
	}
	switch {
	case in.Slug != nil:
		e.Outcome, e.Slug = gen.QuerylogOutcomeUnknownSlug, in.Slug
	case strings.TrimSpace(*in.Query) == "":
		return nil // nothing a curator could add a pattern for
	case len(e.Candidates) > 0:
		e.Outcome, e.Score = gen.QuerylogOutcomeCandidates, &e.Candidates[0].Score
	default:
		e.Outcome = gen.QuerylogOutcomeNoCandidates
	}
	return e
}

func (h *Handlers) getSources(s *snapshot, in *gen.GetSourcesInput, threshold float64) (*gen.GetSourcesOutput, error) {
	query := deref(in.Query)
	empty := &gen.GetSourcesOutput{Query: query, Sources: []gen.RankedSource{}}
	switch {
	case in.Query != nil && in.Slug != nil:
		return nil, &gen.ToolError{Text: "Pass either query or slug, not both: slug returns that category, query searches for one.", Structured: empty}
	case in.Slug != nil:
		return s.bySlug(*in.Slug)
	case in.Query == nil:
		return nil, &gen.ToolError{Text: "Pass query (the topic in a few words, for example \"learn rust\") or slug (a category named by an earlier answer or by list_categories).", Structured: empty}
	}
	ranked, err := s.matcher.Match(query, maxCandidates)
	switch {
	case errors.Is(err, matcher.ErrEmptyQuery):
		return nil, &gen.ToolError{Text: "Query cannot be empty. Describe the topic in a few words, for example \"learn rust\" or \"harden a linux server\".", Structured: empty}
	case errors.Is(err, matcher.ErrOnlyStopWords):
		return nil, &gen.ToolError{Text: "Query '" + query + "' has only common words (such as how, do, I, the), which say nothing about a topic. Name the topic itself, for example \"kubernetes\" or \"password manager\".", Structured: empty}
	case err != nil:
		return nil, err
	}
	if len(ranked) == 0 || ranked[0].Score < threshold {
		return nil, s.noMatch(query, ranked, threshold)
	}
	best := ranked[0]
	out := s.answer(query, best.Slug, best.Score)
	out.Alternatives = s.alternatives(ranked[1:], threshold)
	return out, nil
}

// answer is a found category with its sources.
func (s *snapshot) answer(query, slug string, score float64) *gen.GetSourcesOutput {
	c, _ := s.reg.Category(slug)
	cur := s.reg.Curator()
	out := &gen.GetSourcesOutput{
		Query:           query,
		Slug:            &c.Slug,
		Name:            &c.Name,
		Description:     &c.Description,
		Score:           &score,
		RegistryVersion: ptr(s.reg.Version()),
		Curator:         &gen.AnsweringCurator{Name: cur.Name, Pubkey: cur.Pubkey},
	}
	for _, s := range c.Sources {
		out.Sources = append(out.Sources, gen.RankedSource{Rank: s.Rank, Name: s.Name, URL: s.URL, Type: string(s.Type), Why: s.Why})
	}
	return out
}

// bySlug answers a call that names its category: the agent chose it from
// candidates or list_categories, so it gets that category with score 1.
// A slug that does not exist gets the closest ones, spelled alike or
// about the same words.
func (s *snapshot) bySlug(slug string) (*gen.GetSourcesOutput, error) {
	if _, ok := s.reg.Category(slug); ok {
		return s.answer("", slug, 1), nil
	}
	out := &gen.GetSourcesOutput{Query: "", Sources: []gen.RankedSource{}}
	type near struct {
		slug string
		d    int
	}
	var spelled []near
	for _, sl := range s.slugs {
		if d := edlib.OSADamerauLevenshteinDistance(slug, sl); d <= max(2, len(sl)/4) {
			spelled = append(spelled, near{sl, d})
		}
	}
	slices.SortStableFunc(spelled, func(a, b near) int { return a.d - b.d })
	seen := map[string]bool{}
	add := func(sl string, score float64) {
		if len(out.Candidates) < maxCandidates && !seen[sl] {
			seen[sl] = true
			out.Candidates = append(out.Candidates, s.candidate(sl, score))
		}
	}
	for _, n := range spelled {
		add(n.slug, 0)
	}
	if ranked, err := s.matcher.Match(strings.ReplaceAll(slug, "-", " "), maxCandidates); err == nil {
		for _, r := range ranked {
			add(r.Slug, r.Score)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "No category has the slug %q.", slug)
	if len(out.Candidates) > 0 {
		b.WriteString(" Closest:")
		writeCandidates(&b, out.Candidates)
		b.WriteString("\nCall get_sources with one of these slugs, or with query to search by topic.")
	} else {
		b.WriteString(" Call list_categories to see every slug, or get_sources with query to search by topic.")
	}
	return nil, &gen.ToolError{Text: b.String(), Structured: out}
}

// maxCandidates is how many categories a no-match answer offers; it is
// also how many the matcher ranks for every query.
const maxCandidates = 5

// maxAlternatives is how many runner-up categories get_sources names.
const maxAlternatives = 2

// alternatives are the runner-ups worth offering: those scoring above half
// the threshold. Below that they are noise, not near misses.
func (s *snapshot) alternatives(rest []matcher.Scored, threshold float64) []gen.AlternativeCategory {
	var out []gen.AlternativeCategory
	for _, r := range rest[:min(len(rest), maxAlternatives)] {
		if r.Score <= threshold/2 {
			break
		}
		c, _ := s.reg.Category(r.Slug)
		out = append(out, gen.AlternativeCategory{Slug: r.Slug, Name: c.Name, Score: r.Score})
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

func writeCandidates(b *strings.Builder, cs []gen.CandidateCategory) {
	for _, c := range cs {
		fmt.Fprintf(b, "\n- %s (%s", c.Slug, c.Name)
		if c.Score > 0 {
			fmt.Fprintf(b, ", score %s", fmtScore(c.Score))
		}
		fmt.Fprintf(b, "): %s", c.Description)
	}
}

// noMatch offers the agent the best candidates instead of an answer: it
// reads meaning better than the matcher, so it can pick one by slug.
func (s *snapshot) noMatch(query string, ranked []matcher.Scored, threshold float64) error {
	out := &gen.GetSourcesOutput{Query: query, Sources: []gen.RankedSource{}}
	var b strings.Builder
	fmt.Fprintf(&b, "No category matches query '%s' confidently (a score of at least %s is needed).", query, strconv.FormatFloat(threshold, 'f', -1, 64))
	if len(ranked) > 0 {
		out.Closest = &gen.ClosestCategory{Slug: ranked[0].Slug, Score: ranked[0].Score}
		out.Alternatives = s.alternatives(ranked[1:], threshold)
		for _, r := range ranked[:min(len(ranked), maxCandidates)] {
			out.Candidates = append(out.Candidates, s.candidate(r.Slug, r.Score))
		}
		b.WriteString(" Candidates:")
		writeCandidates(&b, out.Candidates)
		b.WriteString("\nIf one of them fits the question, call get_sources with its slug; otherwise rephrase the query with the topic's own words, or call list_categories.")
	} else {
		b.WriteString(" No category shares a word with it. Rephrase the query with the topic's own words, or call list_categories to see what is covered.")
	}
	return &gen.ToolError{Text: b.String(), Structured: out}
}

// GetSourcesText implements gen.ToolHandlers. It is on every get_sources
// call, so it appends rather than formats.
func (h *Handlers) GetSourcesText(out *gen.GetSourcesOutput) string {
	var b strings.Builder
	b.Grow(1024)
	line := func(label, value string) {
		b.WriteString(label)
		b.WriteString(value)
		b.WriteByte('\n')
	}
	line("Category: ", deref(out.Name))
	line("Slug: ", deref(out.Slug))
	line("Description: ", deref(out.Description))
	line("Match Score: ", fmtScore(deref(out.Score)))
	line("Registry Version: ", deref(out.RegistryVersion))
	line("Curator: ", out.Curator.Name+" ("+out.Curator.Pubkey+")")
	b.WriteString("\nSources:")
	for _, s := range out.Sources {
		b.WriteByte('\n')
		line(strconv.Itoa(s.Rank)+". ", s.Name)
		line("   URL: ", s.URL)
		line("   Type: ", s.Type)
		b.WriteString("   Why: ")
		b.WriteString(s.Why)
	}
	if len(out.Alternatives) > 0 {
		b.WriteString("\n\nAlso close:")
		for _, a := range out.Alternatives {
			b.WriteString("\n- ")
			b.WriteString(a.Slug)
			b.WriteString(" (")
			b.WriteString(a.Name)
			b.WriteString(", score: ")
			b.WriteString(fmtScore(a.Score))
			b.WriteByte(')')
		}
	}
	return b.String()
}

// ListCategories implements gen.ToolHandlers. Pages are cut by slug, so a
// cursor stays valid across a reload: the next page starts after the last
// slug shown, whatever was added or removed meanwhile.
func (h *Handlers) ListCategories(_ context.Context, in *gen.ListCategoriesInput) (*gen.ListCategoriesOutput, error) {
	out := &gen.ListCategoriesOutput{Categories: []gen.CategorySummary{}}
	if in == nil {
		in = &gen.ListCategoriesInput{}
	}
	limit := defaultPage
	if in.Limit != nil {
		limit = *in.Limit
	}
	after := ""
	if in.Cursor != nil {
		var ok bool
		if after, ok = decodeCursor(*in.Cursor); !ok {
			return nil, &gen.ToolError{Text: "cursor: not a cursor this server gave out. Pass the next_cursor of the previous page unchanged, or call list_categories without cursor to start again.", Structured: out}
		}
	}
	words := filterWords(deref(in.Filter))
	for _, c := range h.cur.Load().reg.Categories() { // sorted by slug
		if c.Slug <= after || !matchesFilter(words, c) {
			continue
		}
		if len(out.Categories) == limit {
			out.NextCursor = ptr(encodeCursor(out.Categories[limit-1].Slug))
			break
		}
		out.Categories = append(out.Categories, gen.CategorySummary{Slug: c.Slug, Name: c.Name, Description: c.Description, Tags: strings.Split(c.Slug, "-")})
	}
	return out, nil
}

// defaultPage is list_categories' page size when the call gives none.
const defaultPage = 100

// cursorPrefix versions the cursor, so a later format can tell old ones.
const cursorPrefix = "after:"

func encodeCursor(slug string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + slug))
}

func decodeCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", false
	}
	slug, ok := strings.CutPrefix(string(b), cursorPrefix)
	return slug, ok && slug != "" && len(slug) <= 64 && strings.Trim(slug, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// filterWords splits a filter into lower-case words of letters and digits.
func filterWords(f string) []string {
	return strings.FieldsFunc(strings.ToLower(f), textnorm.IsSeparator)
}

// matchesFilter: every word starts some word of the category's slug, name
// or description.
func matchesFilter(words []string, c registry.Category) bool {
	if len(words) == 0 {
		return true
	}
	have := filterWords(c.Slug + " " + c.Name + " " + c.Description)
	for _, w := range words {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.HasPrefix(h, w) }) {
			return false
		}
	}
	return true
}

// ListCategoriesText implements gen.ToolHandlers.
func (h *Handlers) ListCategoriesText(out *gen.ListCategoriesOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Categories (%d):\n", len(out.Categories))
	for _, c := range out.Categories {
		fmt.Fprintf(&b, "\n%s: %s\n  %s\n  Tags: %s\n", c.Slug, c.Name, c.Description, strings.Join(c.Tags, ", "))
	}
	if out.NextCursor != nil {
		fmt.Fprintf(&b, "\nMore follow: call list_categories with cursor %q (and the same filter).\n", *out.NextCursor)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Published is the registry as it is served right now, for endpoints that
// hand out the file itself.
type Published struct {
	Registry  *registry.Registry
	Signature signature.Status
	// Modified is when these bytes became the registry; zero when unknown.
	Modified time.Time
}

// Published returns the registry being served.
func (h *Handlers) Published() Published {
	s := h.cur.Load()
	return Published{Registry: s.reg, Signature: s.signature, Modified: s.modified}
}

type registryURLKey struct{}

// WithRegistryURL returns ctx for a request that arrived over HTTP from a
// client that reaches the registry at base/registry: get_provenance then
// tells it to download the files rather than naming paths on the server.
func WithRegistryURL(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, registryURLKey{}, base)
}

// GetProvenance implements gen.ToolHandlers.
func (h *Handlers) GetProvenance(ctx context.Context, _ *gen.GetProvenanceInput) (*gen.GetProvenanceOutput, error) {
	s := h.cur.Load()
	files := s.files
	if base, ok := ctx.Value(registryURLKey{}).(string); ok {
		files = signature.Remote(base)
	}
	cur := s.reg.Curator()
	curatorKey, configured := s.reg.CuratorKey()
	st := s.signature
	out := &gen.GetProvenanceOutput{
		Curator:          gen.RegistryCurator{Name: cur.Name, Pubkey: cur.Pubkey},
		PubkeyConfigured: configured,
		Version:          s.reg.Version(),
		Updated:          s.reg.Updated(),
		CategoryCount:    len(s.reg.Categories()),
		EndorsementCount: len(s.reg.Endorsements()),
		RegistrySha256:   s.reg.SHA256(),
		Signed:           st.Signed(),
		Verified:         st.Verified,
	}
	if st.Signer != nil {
		out.SignedBy = ptr(pkarr.URI(st.Signer))
	}
	if st.SignedAt != "" {
		out.SignedAt = ptr(st.SignedAt)
	}
	var ins signature.Instructions
	switch {
	case st.Verified:
		out.SignatureDetail = "Signed by the curator's key " + cur.Pubkey + " at " + st.SignedAt + "; the signature is valid for the exact bytes served."
		ins = signature.SignedInstructions(curatorKey, s.reg.SHA256(), files)
	case st.Signed():
		out.SignatureDetail = "NOT VERIFIED: " + st.Problem.Error() + ". Do not rely on this registry's origin until its curator re-signs it."
		ins = signature.UnsignedInstructions(s.reg.SHA256(), files)
	case configured:
		out.SignatureDetail = "Unsigned: the registry names curator key " + cur.Pubkey + ", but no signature file accompanies it, so nothing proves the curator wrote these bytes."
		ins = signature.UnsignedInstructions(s.reg.SHA256(), files)
	default:
		out.SignatureDetail = "Unsigned: the registry has no curator key yet (" + registry.Placeholder + "), so it cannot be signed; the digest only shows which bytes are served."
		ins = signature.UnsignedInstructions(s.reg.SHA256(), files)
	}
	out.Verification = gen.Verification{Where: ins.Where, Steps: []gen.VerificationStep{}}
	if ins.Command != "" {
		out.Verification.Command = ptr(ins.Command)
	}
	for _, s := range ins.Steps {
		out.Verification.Steps = append(out.Verification.Steps, gen.VerificationStep{What: s.What, Run: s.Run, Expect: s.Expect})
	}
	return out, nil
}

// GetProvenanceText implements gen.ToolHandlers.
func (h *Handlers) GetProvenanceText(out *gen.GetProvenanceOutput) string {
	var b strings.Builder
	key := out.Curator.Pubkey
	if !out.PubkeyConfigured {
		key = "none yet (" + key + ")"
	}
	state := "no"
	switch {
	case out.Verified:
		state = "yes, verified"
	case out.Signed:
		state = "present but NOT VERIFIED"
	}
	fmt.Fprintf(&b, "Curator: %s\nPublic Key: %s\nRegistry Version: %s\nLast Updated: %s\nCategories: %d\nEndorsements: %d\nRegistry SHA-256: %s\nSignature: %s\n%s\n",
		out.Curator.Name, key, out.Version, out.Updated, out.CategoryCount, out.EndorsementCount, out.RegistrySha256, state, out.SignatureDetail)
	v := out.Verification
	b.WriteString("\nVerify it yourself\n")
	if v.Command != nil {
		b.WriteString("With 3gs: " + *v.Command + "\n")
	}
	if v.Where != "" {
		b.WriteString("Files: " + v.Where + "\n")
	}
	if v.Command != nil {
		b.WriteString("Without 3gs, in a POSIX shell:\n")
	}
	for i, s := range v.Steps {
		fmt.Fprintf(&b, "%d. %s\n   $ %s\n   Expect: %s\n", i+1, s.What, s.Run, s.Expect)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// GetEndorsements implements gen.ToolHandlers.
func (h *Handlers) GetEndorsements(context.Context, *gen.GetEndorsementsInput) (*gen.GetEndorsementsOutput, error) {
	out := &gen.GetEndorsementsOutput{Endorsements: []gen.GetEndorsementsOutputEndorsementsElem{}}
	for _, e := range h.cur.Load().reg.Endorsements() {
		out.Endorsements = append(out.Endorsements, gen.GetEndorsementsOutputEndorsementsElem{Pubkey: e.Pubkey, URL: e.URL, Name: e.Name, Since: e.Since})
	}
	return out, nil
}

// GetEndorsementsText implements gen.ToolHandlers.
func (h *Handlers) GetEndorsementsText(out *gen.GetEndorsementsOutput) string {
	if len(out.Endorsements) == 0 {
		return "No endorsements yet. An endorsement is another curator's public statement, published at a URL under their own public key, that they vouch for this registry. Endorsements appear here once the curator lists them in the registry."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Endorsements (%d):\n", len(out.Endorsements))
	for _, e := range out.Endorsements {
		name := "(unnamed)"
		if e.Name != nil {
			name = *e.Name
		}
		fmt.Fprintf(&b, "- %s: %s, since %s, published at %s\n", name, e.Pubkey, e.Since, e.URL)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// fmtScore shows a score with two decimals, rounded down: 0.898 against a
// threshold of 0.9 must not read as "0.90".
func fmtScore(s float64) string {
	return strconv.FormatFloat(math.Floor(s*100+1e-9)/100, 'f', 2, 64)
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
