package pages

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/registry"
)

// Purpose is the one line every home page says of what it is.
const Purpose = "Three human-vetted sources for each topic, ranked, each with a line on why: what an AI agent gets from this registry over MCP, and what you can browse here."

// listed is a category as lists show it.
type listed struct {
	Slug, Name, Line string
}

// group is the categories under one heading of the home page.
type group struct {
	Heading string
	Cats    []listed
}

type homeBody struct {
	Purpose      string
	Count        int
	Groups       []group
	Page, Pages  int
	Prov         *gen.GetProvenanceOutput
	Health       *gen.HealthSources
	MCPURL       string // "" in a static export
	Stdio, HTTP  string // MCP host configuration snippets
	Endorsements int
}

// groupOf is the heading a category is listed under: the first letter of
// its slug. The registry has no field for a domain, and its categories are
// kept in slug order, so a page of them is a run of that order, split
// where the letter changes, with no sorting per request.
func groupOf(slug string) string {
	r, _ := utf8.DecodeRuneInString(slug)
	if !unicode.IsLetter(r) {
		return "Other"
	}
	return string(unicode.ToUpper(r))
}

// homeBody is the home page's data: page n (from 1) of the categories.
func (s *Site) homeBody(ctx context.Context, n int, base string) (*homeBody, error) {
	reg := s.c.Tools.Published().Registry
	cats := reg.Categories()
	pages := max(1, (len(cats)+PageSize-1)/PageSize)
	if n < 1 || n > pages {
		return nil, ErrNotFound
	}
	prov, err := s.c.Tools.GetProvenance(ctx, &gen.GetProvenanceInput{})
	if err != nil {
		return nil, err
	}
	b := &homeBody{Purpose: Purpose, Count: len(cats), Page: n, Pages: pages, Prov: prov, Endorsements: len(reg.Endorsements())}
	if s.c.Sources != nil {
		b.Health = s.c.Sources()
	}
	for _, c := range cats[(n-1)*PageSize : min(n*PageSize, len(cats))] {
		h := groupOf(c.Slug)
		if len(b.Groups) == 0 || b.Groups[len(b.Groups)-1].Heading != h {
			b.Groups = append(b.Groups, group{Heading: h})
		}
		g := &b.Groups[len(b.Groups)-1]
		g.Cats = append(g.Cats, listed{Slug: c.Slug, Name: c.Name, Line: firstLine(c.Description)})
	}
	b.Stdio = "{\n  \"mcpServers\": {\n    \"3gs\": { \"command\": \"3gs\", \"args\": [\"serve\"] }\n  }\n}"
	if base != "" {
		b.MCPURL = base + "/mcp"
		b.HTTP = "{\n  \"servers\": {\n    \"3gs\": { \"type\": \"http\", \"url\": \"" + b.MCPURL + "\" }\n  }\n}"
	}
	return b, nil
}

type searchBody struct {
	Query      string
	Answer     *gen.GetSourcesOutput // the confident category
	Candidates []gen.CandidateCategory
	More       []gen.ListedCategory
	Covered    bool   // the query shares words with some category
	Problem    string // why the query could not be searched
	Count      int
}

// moreShown is how many further categories a search that found no
// confident one lists by name.
const moreShown = 20

// searchBody asks get_sources, as an agent would, and keeps what it
// answered.
func (s *Site) searchBody(ctx context.Context, q string) (*searchBody, error) {
	b := &searchBody{Query: q, Count: len(s.c.Tools.Published().Registry.Categories())}
	out, err := s.c.Tools.GetSources(ctx, &gen.GetSourcesInput{Query: &q})
	if err == nil {
		b.Answer, b.Covered = out, true
		return b, nil
	}
	miss, text, ok := toolError[gen.GetSourcesOutput](err)
	if !ok {
		return nil, err
	}
	if miss == nil || (miss.CategoryCount == nil && len(miss.Candidates) == 0) {
		// An empty query, one of stop words only, or a registry withheld.
		b.Problem = text
		return b, nil
	}
	b.Candidates = miss.Candidates
	b.Covered = len(miss.Candidates) > 0
	more := miss.MoreCategories
	if len(more) == 0 && miss.CategoryCount != nil && *miss.CategoryCount > len(miss.Candidates) {
		// The answer left the other categories out: to the MCP
		// instructions' catalog, which a browser never sees, or to its
		// text, as the registry is too large to list whole. List the
		// first of them here.
		more = otherCategories(s.c.Tools.Published().Registry, miss.Candidates, moreShown)
	}
	b.More = more[:min(len(more), moreShown)]
	return b, nil
}

type categoryBody struct {
	Out        *gen.GetSourcesOutput
	LastChange *gen.AuditEntry
	Candidates []gen.CandidateCategory // for a slug not found
	Tags       []string                // the curator's, none when absent
	Slug       string
	Problem    string
}

// categoryBody is get_sources' answer for slug, with when the audit log
// last recorded a change to it. ErrNotFound comes with the closest
// categories.
func (s *Site) categoryBody(ctx context.Context, slug string) (*categoryBody, error) {
	b := &categoryBody{Slug: slug}
	out, err := s.c.Tools.GetSources(ctx, &gen.GetSourcesInput{Slug: &slug})
	if err != nil {
		miss, text, ok := toolError[gen.GetSourcesOutput](err)
		if !ok {
			return nil, err
		}
		if _, found := s.c.Tools.Published().Registry.Category(slug); found {
			b.Problem = text // withheld: the signature expired
			return b, nil
		}
		if miss != nil {
			b.Candidates = miss.Candidates
		}
		return b, ErrNotFound
	}
	b.Out = out
	if c, ok := s.c.Tools.Published().Registry.Category(slug); ok {
		b.Tags = c.Tags
	}
	b.LastChange = s.lastChange(slug)
	return b, nil
}

// lastChange is the newest audit entry naming slug, nil when the node
// keeps no log or it has none.
func (s *Site) lastChange(slug string) *gen.AuditEntry {
	q := auditlog.Query{Slug: slug, Limit: auditlog.MaxPage}
	var last *gen.AuditEntry
	for range 1000 { // bounded: a page holds MaxPage entries
		p, err := s.c.Tools.AuditPage(q)
		if err != nil {
			return nil
		}
		if n := len(p.Entries); n > 0 {
			last = p.Entries[n-1]
		}
		if p.Next == 0 {
			break
		}
		q.Since = p.Next
	}
	return last
}

type provenanceBody struct {
	Prov    *gen.GetProvenanceOutput
	Entries []*gen.AuditEntry // newest first
	NoLog   string
	Head    int
}

// recentEntries is how many audit entries /provenance shows.
const recentEntries = 20

func (s *Site) provenanceBody(ctx context.Context) (*provenanceBody, error) {
	prov, err := s.c.Tools.GetProvenance(ctx, &gen.GetProvenanceInput{})
	if err != nil {
		return nil, err
	}
	b := &provenanceBody{Prov: prov}
	head, _, err := s.c.Tools.AuditHead()
	if err != nil {
		if !errors.Is(err, auditlog.ErrNoLog) {
			return nil, err
		}
		b.NoLog = err.Error()
		return b, nil
	}
	b.Head = head.Seq
	p, err := s.c.Tools.AuditPage(auditlog.Query{Since: max(0, head.Seq-recentEntries), Limit: recentEntries})
	if err != nil {
		return nil, err
	}
	for i := len(p.Entries) - 1; i >= 0; i-- {
		b.Entries = append(b.Entries, p.Entries[i])
	}
	return b, nil
}

type networkBody struct {
	Out *gen.GetEndorsementsOutput
}

func (s *Site) networkBody(ctx context.Context) (*networkBody, error) {
	out, err := s.c.Tools.GetEndorsements(ctx, &gen.GetEndorsementsInput{})
	if err != nil {
		return nil, err
	}
	return &networkBody{Out: out}, nil
}

type proposalsBody struct {
	Out  *gen.ListProposalsOutput
	None string // why there are none to show
}

// proposalsShown is how many proposals /proposals lists.
const proposalsShown = 100

func (s *Site) proposalsBody(ctx context.Context) (*proposalsBody, error) {
	limit := proposalsShown
	out, err := s.c.Tools.ListProposals(ctx, &gen.ListProposalsInput{Limit: &limit})
	if err != nil {
		_, text, ok := toolError[gen.ListProposalsOutput](err)
		if !ok {
			return nil, err
		}
		return &proposalsBody{None: text}, nil
	}
	return &proposalsBody{Out: out}, nil
}

// Home renders page n of the home page; base is the node's URL ("" for a
// static export).
func (s *Site) Home(ctx context.Context, l Links, n int, base string) ([]byte, error) {
	b, err := s.homeBody(ctx, n, base)
	if err != nil {
		return nil, err
	}
	title := "Three good sources, curated by " + registry.Visible(s.c.Tools.Published().Registry.Curator().Name)
	if n > 1 {
		title += fmt.Sprintf(" (page %d of %d)", n, b.Pages)
	}
	return s.render(l, "home", title, b)
}

// Search renders the answer to query q.
func (s *Site) Search(ctx context.Context, l Links, q string) ([]byte, error) {
	b, err := s.searchBody(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.render(l, "search", "Search: "+q, b)
}

// Category renders the page of slug; for a slug the registry lacks, a
// page with the closest ones and ErrNotFound.
func (s *Site) Category(ctx context.Context, l Links, slug string) ([]byte, error) {
	b, err := s.categoryBody(ctx, slug)
	switch {
	case errors.Is(err, ErrNotFound):
		page, rerr := s.render(l, "notfound", "No such category", b)
		if rerr != nil {
			return nil, rerr
		}
		return page, ErrNotFound
	case err != nil:
		return nil, err
	}
	title := slug
	if b.Out != nil {
		title = deref(b.Out.Name)
	}
	return s.render(l, "category", title, b)
}

// Provenance renders who vouches for the registry and its recent history.
func (s *Site) Provenance(ctx context.Context, l Links) ([]byte, error) {
	b, err := s.provenanceBody(ctx)
	if err != nil {
		return nil, err
	}
	return s.render(l, "provenance", "Provenance", b)
}

// Network renders the endorsed curators and their state.
func (s *Site) Network(ctx context.Context, l Links) ([]byte, error) {
	b, err := s.networkBody(ctx)
	if err != nil {
		return nil, err
	}
	return s.render(l, "network", "Network", b)
}

// Proposals renders the proposals, read-only.
func (s *Site) Proposals(ctx context.Context, l Links) ([]byte, error) {
	b, err := s.proposalsBody(ctx)
	if err != nil {
		return nil, err
	}
	return s.render(l, "proposals", "Proposals", b)
}

// otherCategories are the first most of reg's categories by slug and
// name, in catalog order, but for the candidates.
func otherCategories(reg *registry.Registry, candidates []gen.CandidateCategory, most int) []gen.ListedCategory {
	var out []gen.ListedCategory
	for _, c := range reg.Categories() {
		if len(out) == most {
			break
		}
		if !slices.ContainsFunc(candidates, func(cc gen.CandidateCategory) bool { return cc.Slug == c.Slug }) {
			out = append(out, gen.ListedCategory{Slug: c.Slug, Name: c.Name})
		}
	}
	return out
}
