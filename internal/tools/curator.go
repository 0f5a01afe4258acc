package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// explainer is the matcher that can say why it scored what it did.
type explainer interface {
	Explain(query string, limit int) ([]matcher.Explanation, error)
}

// defaultExplainLimit is how many candidates explain_match shows by default.
const defaultExplainLimit = 5

// ExplainMatch implements gen.ToolHandlers.
func (h *Handlers) ExplainMatch(_ context.Context, in *gen.ExplainMatchInput) (*gen.ExplainMatchOutput, error) {
	s := h.cur.Load()
	threshold := h.threshold
	if in.Threshold != nil {
		threshold = *in.Threshold
	}
	limit := defaultExplainLimit
	if in.Limit != nil {
		limit = *in.Limit
	}
	out := &gen.ExplainMatchOutput{Query: in.Query, Threshold: threshold, Candidates: []gen.Candidate{}}
	x, ok := s.matcher.(explainer)
	if !ok {
		return nil, &gen.ToolError{Text: "This server runs the baseline matcher, which cannot explain its scores. Start it with --matcher index (the default).", Structured: out}
	}
	ex, err := x.Explain(in.Query, limit)
	switch {
	case errors.Is(err, matcher.ErrEmptyQuery), errors.Is(err, matcher.ErrOnlyStopWords):
		return nil, &gen.ToolError{Text: "Query '" + in.Query + "' has no words that say anything about a topic, so nothing is scored. Name the topic itself.", Structured: out}
	case err != nil:
		return nil, err
	}
	for i, e := range ex {
		c, _ := s.reg.Category(e.Slug)
		cand := gen.Candidate{
			Slug: e.Slug, Name: c.Name, Score: e.Score, Coverage: clamp01(e.Coverage), Phrase: clamp01(e.Phrase), Adjacency: clamp01(e.Adjacency),
			Fields: []gen.FieldCoverage{}, Words: []gen.Word{},
		}
		if e.BestPhrase != "" {
			cand.BestPhrase = ptr(e.BestPhrase)
		}
		if e.Doubt != "" {
			cand.Doubt = ptr(e.Doubt)
		}
		if e.Margin > 0 {
			cand.Margin = ptr(clamp01(e.Margin))
		}
		for f := range matcher.NumFields {
			if v := e.Fields[f]; v > 0 {
				cand.Fields = append(cand.Fields, gen.FieldCoverage{Field: matcher.Field(f).String(), Coverage: clamp01(v)})
			}
		}
		for _, w := range e.Words {
			word := gen.Word{Word: w.Word, Kind: w.Kind.String(), Weight: clamp01(w.Weight), Contribution: clamp01(w.Contribution)}
			if w.Common {
				word.Common = ptr(true)
			}
			if w.Term != "" {
				word.Term, word.Quality = ptr(w.Term), ptr(clamp01(w.Quality))
				for _, f := range w.In {
					word.In = append(word.In, f.String())
				}
			}
			cand.Words = append(cand.Words, word)
		}
		if i == 0 && e.Score >= threshold {
			out.Matched = ptr(e.Slug)
		}
		out.Candidates = append(out.Candidates, cand)
	}
	return out, nil
}

// clamp01 keeps a float within [0, 1] against rounding at the edges.
func clamp01(v float64) float64 { return min(max(v, 0), 1) }

// ExplainMatchText implements gen.ToolHandlers.
func (h *Handlers) ExplainMatchText(out *gen.ExplainMatchOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Query: %s\nThreshold: %s\n", out.Query, fmtScore(out.Threshold))
	if out.Matched != nil {
		fmt.Fprintf(&b, "get_sources answers with: %s\n", *out.Matched)
	} else {
		b.WriteString("get_sources answers with: nothing (no candidate reaches the threshold)\n")
	}
	for i, c := range out.Candidates {
		fmt.Fprintf(&b, "\n%d. %s (%s), score %.3f\n   coverage %.3f, phrase %.3f, adjacency %.3f\n", i+1, c.Slug, c.Name, c.Score, c.Coverage, c.Phrase, c.Adjacency)
		if c.BestPhrase != nil {
			fmt.Fprintf(&b, "   best phrase: %s\n", *c.BestPhrase)
		}
		if c.Doubt != nil {
			fmt.Fprintf(&b, "   not confident: %s (score scaled down)\n", *c.Doubt)
		}
		if c.Margin != nil {
			fmt.Fprintf(&b, "   +%.3f for a clear lead over the runner-up, or word vectors that agree\n", *c.Margin)
		}
		var fields []string
		for _, f := range c.Fields {
			fields = append(fields, fmt.Sprintf("%s %.3f", f.Field, f.Coverage))
		}
		if len(fields) == 0 {
			fields = []string{"none"}
		}
		fmt.Fprintf(&b, "   coverage by field: %s\n", strings.Join(fields, ", "))
		for _, w := range c.Words {
			found := "met nothing in this category"
			if w.Term != nil {
				found = fmt.Sprintf("met %q (%s, quality %.2f) in %s", *w.Term, w.Kind, *w.Quality, strings.Join(w.In, ", "))
			} else if w.Kind == matcher.KindNone.String() {
				found = "unknown to the registry"
			}
			if w.Common != nil && *w.Common {
				found += "; an ordinary English word"
			}
			fmt.Fprintf(&b, "   - %s: weight %.3f, +%.3f, %s\n", w.Word, w.Weight, w.Contribution, found)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// changeOutput is the state a change leaves, shared by upsert and remove.
func changeOutput(s *snapshot, slug string) gen.RemoveCategoryOutput {
	return gen.RemoveCategoryOutput{
		Slug: slug, RegistryVersion: s.reg.Version(), Updated: s.reg.Updated(), RegistrySha256: s.reg.SHA256(),
		CategoryCount: len(s.reg.Categories()), Signed: s.signature.Verified,
	}
}

// editFailure reports a change that did not happen: the structured content
// describes the registry still served.
func editFailure[T any](text string, state T) error {
	return &gen.ToolError{Text: text + " Nothing was changed.", Structured: state}
}

// UpsertCategory implements gen.ToolHandlers.
func (h *Handlers) UpsertCategory(ctx context.Context, in *gen.UpsertCategoryInput) (*gen.UpsertCategoryOutput, error) {
	upsertState := func(s *snapshot, created bool) *gen.UpsertCategoryOutput {
		c := changeOutput(s, in.Slug)
		return &gen.UpsertCategoryOutput{Slug: c.Slug, Created: created, RegistryVersion: c.RegistryVersion, Updated: c.Updated, RegistrySha256: c.RegistrySha256, CategoryCount: c.CategoryCount, Signed: c.Signed}
	}
	if h.edit == nil {
		return nil, editFailure(errNoFile, upsertState(h.cur.Load(), false))
	}
	var created bool
	next, err := h.change(auth.CallerFrom(ctx).Name, gen.ToolUpsertCategory, in.Slug, func(doc *gen.Registry) error {
		_, exists := doc.Categories[in.Slug]
		created = !exists
		doc.Categories[in.Slug] = in.Category
		return nil
	})
	var errs strictjson.Errors
	switch {
	case errors.As(err, &errs):
		return nil, categoryErrors(err, in.Slug) // the caller's category breaks a rule: Invalid params
	case err != nil:
		return nil, editFailure("Cannot change the registry: "+err.Error()+".", upsertState(h.cur.Load(), false))
	}
	return upsertState(next, created), nil
}

// UpsertCategoryText implements gen.ToolHandlers.
func (h *Handlers) UpsertCategoryText(out *gen.UpsertCategoryOutput) string {
	verb := "Replaced"
	if out.Created {
		verb = "Added"
	}
	return fmt.Sprintf("%s category %s. %s", verb, out.Slug, changeText(out.RegistryVersion, out.Updated, out.CategoryCount, out.RegistrySha256, out.Signed))
}

func changeText(version, updated string, count int, sha string, signed bool) string {
	sig := "The file is not signed."
	if signed {
		sig = "The file is signed with the curator key."
	}
	return fmt.Sprintf("Registry version %s, updated %s, %d categories, SHA-256 %s. %s", version, updated, count, sha, sig)
}

// RemoveCategory implements gen.ToolHandlers.
func (h *Handlers) RemoveCategory(ctx context.Context, in *gen.RemoveCategoryInput) (*gen.RemoveCategoryOutput, error) {
	state := func(s *snapshot) *gen.RemoveCategoryOutput { c := changeOutput(s, in.Slug); return &c }
	if h.edit == nil {
		return nil, editFailure(errNoFile, state(h.cur.Load()))
	}
	next, err := h.change(auth.CallerFrom(ctx).Name, gen.ToolRemoveCategory, in.Slug, func(doc *gen.Registry) error {
		if _, ok := doc.Categories[in.Slug]; !ok {
			return strictjson.Errors{{Path: "slug", Reason: "no category has this slug; list_categories shows them"}}
		}
		if len(doc.Categories) == 1 {
			return strictjson.Errors{{Path: "slug", Reason: "this is the registry's only category, and a registry keeps at least one"}}
		}
		delete(doc.Categories, in.Slug)
		return nil
	})
	var errs strictjson.Errors
	switch {
	case errors.As(err, &errs):
		return nil, err
	case err != nil:
		return nil, editFailure("Cannot change the registry: "+err.Error()+".", state(h.cur.Load()))
	}
	return state(next), nil
}

// RemoveCategoryText implements gen.ToolHandlers.
func (h *Handlers) RemoveCategoryText(out *gen.RemoveCategoryOutput) string {
	return fmt.Sprintf("Removed category %s. %s", out.Slug, changeText(out.RegistryVersion, out.Updated, out.CategoryCount, out.RegistrySha256, out.Signed))
}

// ReloadRegistry implements gen.ToolHandlers.
func (h *Handlers) ReloadRegistry(ctx context.Context, _ *gen.ReloadRegistryInput) (*gen.ReloadRegistryOutput, error) {
	state := func(s *snapshot, reloaded bool) *gen.ReloadRegistryOutput {
		return &gen.ReloadRegistryOutput{Reloaded: reloaded, RegistryVersion: s.reg.Version(), RegistrySha256: s.reg.SHA256(), CategoryCount: len(s.reg.Categories()), Verified: s.signature.Verified}
	}
	if h.edit == nil {
		return nil, editFailure(errNoFile, state(h.cur.Load(), false))
	}
	e := h.edit
	e.mu.Lock()
	defer e.mu.Unlock()
	old := h.cur.Load()
	refuse := func(text string, problems strictjson.Errors) error {
		out := state(old, false)
		out.Errors = []gen.Problem{}
		for _, p := range problems {
			out.Errors = append(out.Errors, gen.Problem{Path: p.Path, Reason: p.Reason})
		}
		return &gen.ToolError{Text: text + " The registry served is unchanged (version " + old.reg.Version() + ").", Structured: out}
	}
	data, doc, err := signature.ReadSigned(e.Path, registry.MaxSize)
	if err != nil {
		return nil, refuse("Cannot read "+e.Path+": "+err.Error()+".", strictjson.Errors{{Reason: err.Error()}})
	}
	reg, err := registry.Load(data)
	if err != nil {
		var errs strictjson.Errors
		if !errors.As(err, &errs) {
			errs = strictjson.Errors{{Reason: err.Error()}}
		}
		var lines []string
		for _, p := range errs {
			lines = append(lines, "- "+p.Error())
		}
		return nil, refuse(fmt.Sprintf("%s is not a valid registry (%d problems):\n%s\n", e.Path, len(errs), strings.Join(lines, "\n")), errs)
	}
	st := signature.Check(reg, doc)
	if msg, path := e.checkAnchor(old, reg, st); msg != "" {
		return nil, refuse(msg+" The registry served before stays.", strictjson.Errors{{Path: path, Reason: msg}})
	}
	if err := st.Refuse(reg); err != nil && !e.AllowUnsigned {
		msg := "The signature of " + e.Path + " does not verify: " + err.Error() + "."
		if errors.Is(err, signature.ErrMissing) {
			msg = e.Path + " names the curator key " + reg.Curator().Pubkey + " but has no signature file " + e.Path + signature.Suffix + "; the curator signs it with 3gs sign."
		}
		return nil, refuse(msg+" The registry served before stays.", strictjson.Errors{{Path: "", Reason: "signature: " + err.Error()}})
	}
	if e.Key != nil {
		if err := signature.CheckCurator(reg, pkarr.Public(e.Key)); err != nil {
			return nil, refuse("The file names another curator than the key this server holds: "+err.Error()+".", strictjson.Errors{{Path: "curator.pubkey", Reason: err.Error()}})
		}
	}
	if err := e.audit(e.Now(), auth.CallerFrom(ctx).Name, gen.ToolReloadRegistry, "", old.reg, reg); err != nil {
		return nil, refuse("Cannot record the reload in the audit log: "+err.Error()+".", strictjson.Errors{{Reason: err.Error()}})
	}
	modified := e.Now()
	if fi, err := os.Stat(e.Path); err == nil {
		modified = fi.ModTime()
	}
	next := newSnapshot(reg, e.NewMatcher(reg), st, old.files, modified)
	h.cur.Store(next)
	if e.Anchor == nil && st.Verified {
		e.Anchor, e.AnchorFrom = st.Signer, "the first verified registry this server loaded"
	}
	return state(next, true), nil
}

// checkAnchor says why reg may not replace the served registry old, and
// the path of the problem, or "" when it may. A file anyone can write must
// not be able to change who the curator is, bring back an older version,
// or shed its signature, whatever --allow-unsigned says:
//   - once a curator key is trusted, only a registry verified under that
//     key loads (another key, or no valid signature, is refused);
//   - a version lower than the one served is a rollback.
func (e *editor) checkAnchor(old *snapshot, reg *registry.Registry, st signature.Status) (msg, path string) {
	if e.Anchor != nil {
		trusted := pkarr.URI(e.Anchor) + " (" + e.AnchorFrom + ")"
		switch {
		case !st.Verified && !st.Signed():
			return "Refusing a downgrade to an unsigned registry: " + e.Path + " has no valid signature file, and this server trusts only registries signed by " + trusted + ".", "signature"
		case !st.Verified:
			return "Refusing " + e.Path + ": its signature does not verify (" + st.Problem.Error() + "), and this server trusts only registries signed by " + trusted + ".", "signature"
		case !st.Signer.Equal(e.Anchor):
			return "Refusing a change of curator key: " + e.Path + " is signed by " + pkarr.URI(st.Signer) + ", but this server trusts " + trusted + ". A new curator key takes a restart with --pubkey set to it.", "curator.pubkey"
		}
	}
	if registry.CompareVersions(reg.Version(), old.reg.Version()) < 0 {
		return "Refusing a rollback: " + e.Path + " is version " + reg.Version() + ", lower than the version " + old.reg.Version() + " being served. An older copy put back, even one its curator signed, is not loaded; publish the content again under a higher version.", "version"
	}
	return "", ""
}

// ReloadRegistryText implements gen.ToolHandlers.
func (h *Handlers) ReloadRegistryText(out *gen.ReloadRegistryOutput) string {
	verified := "not verified by a curator signature"
	if out.Verified {
		verified = "verified by its curator's signature"
	}
	return fmt.Sprintf("Reloaded: now serving registry version %s, %d categories, SHA-256 %s, %s.", out.RegistryVersion, out.CategoryCount, out.RegistrySha256, verified)
}
