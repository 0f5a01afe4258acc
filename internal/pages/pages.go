// Package pages renders the registry for people: server-rendered HTML
// pages (the home page with search, a page per category, provenance, the
// network of endorsed curators, proposals), the same pages as a static
// site, and one Markdown file in the shape of an awesome-list.
//
// It computes nothing of its own: every figure comes from the tools the
// agents call (get_sources through the same matcher, get_provenance,
// get_endorsements, list_proposals) and from the served audit log, so a
// person and an agent always see the same answer. Every string a curator,
// a peer or a proposer wrote reaches the page through html/template, which
// escapes it; a URL becomes a link only when it is http(s).
package pages

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/store"
)

// Tools is what the pages read: the tools the agents call, the registry
// served and its audit log. *tools.Handlers is one.
type Tools interface {
	GetSources(ctx context.Context, in *gen.GetSourcesInput) (*gen.GetSourcesOutput, error)
	GetProvenance(ctx context.Context, in *gen.GetProvenanceInput) (*gen.GetProvenanceOutput, error)
	GetEndorsements(ctx context.Context, in *gen.GetEndorsementsInput) (*gen.GetEndorsementsOutput, error)
	ListProposals(ctx context.Context, in *gen.ListProposalsInput) (*gen.ListProposalsOutput, error)
	Published() store.Served
	AuditPage(q auditlog.Query) (*auditlog.Page, error)
	AuditHead() (auditlog.Head, store.Served, error)
}

// Config is what a Site renders.
type Config struct {
	Tools Tools
	// Sources, when set, returns what the last check of the sources
	// found (the /health summary); nil when none is known.
	Sources func() *gen.HealthSources
	// Now is the clock of "checked 3 days ago"; nil means time.Now.
	Now func() time.Time
}

// Site renders the pages of one node.
type Site struct {
	c Config
}

// New returns the site over c.
func New(c Config) *Site {
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Site{c: c}
}

// PageSize is the most categories the home page lists at once: a
// registry of 100,000 categories is browsed page by page, and searched.
const PageSize = 200

// MaxQuery is the longest search query, in bytes, a page accepts; the
// tools take longer ones, but no person types them.
const MaxQuery = 500

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static/style.css static/favicon.svg
var staticFiles embed.FS

// CSS and Favicon are the stylesheet and icon every page links.
var (
	CSS     = mustRead("static/style.css")
	Favicon = mustRead("static/favicon.svg")
	// CSSName is the stylesheet's name on the server: its content's
	// hash is in it, so it can be cached for good.
	CSSName = "style-" + shortHash(CSS) + ".css"
)

func mustRead(name string) []byte {
	b, err := fs.ReadFile(staticFiles, name)
	if err != nil {
		panic(err)
	}
	return b
}

func shortHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// Links says where a page's links point: at the server's routes, or at
// the files of a static export, relative to the page.
type Links struct {
	// Static: the pages are files (index.html, c/SLUG.html ...).
	Static bool
	// Root leads from the page to the site's root: "" or "../".
	Root string
}

// Home is the home page, page 1 of the categories.
func (l Links) Home() string {
	if l.Static {
		return l.Root + "index.html"
	}
	return "/"
}

// List is page n of the categories.
func (l Links) List(n int) string {
	if n <= 1 {
		return l.Home()
	}
	if l.Static {
		return l.Root + "index-" + strconv.Itoa(n) + ".html"
	}
	return "/?page=" + strconv.Itoa(n)
}

// Cat is the page of the category slug.
func (l Links) Cat(slug string) string {
	if l.Static {
		return l.Root + "c/" + url.PathEscape(slug) + ".html"
	}
	return "/c/" + url.PathEscape(slug)
}

// Page is one of the named pages: provenance, network, proposals.
func (l Links) Page(name string) string {
	if l.Static {
		return l.Root + name + ".html"
	}
	return "/" + name
}

// CSS is the stylesheet.
func (l Links) CSS() string {
	if l.Static {
		return l.Root + "static/style.css"
	}
	return "/static/" + CSSName
}

// Icon is the favicon.
func (l Links) Icon() string {
	if l.Static {
		return l.Root + "static/favicon.svg"
	}
	return "/favicon.svg"
}

// Live: pages served by a node, which can search and link its JSON
// endpoints; a static export can do neither.
func (l Links) Live() bool { return !l.Static }

// httpURL reports whether u is an absolute http(s) URL, the only kind a
// page renders as a link.
func httpURL(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != ""
}

var funcs = template.FuncMap{
	"httpURL": httpURL,
	"when":    when,
	"pct":     func(f float64) string { return strconv.Itoa(int(f*100+0.5)) + "%" },
	"inc":     func(n int) int { return n + 1 },
	"dec":     func(n int) int { return n - 1 },
	"deref":   func(s *string) string { return deref(s) },
	"derefF": func(f *float64) float64 {
		if f == nil {
			return 0
		}
		return *f
	},
}

// when shows a time as a day and time in UTC. It takes the generated
// types' date-times as they are, an RFC 3339 string (or a pointer to one)
// or a time.Time, so the pages read every date in this one place; a string
// that is not RFC 3339 is shown as it is, a nil pointer as nothing.
func when(v any) string {
	var t time.Time
	switch v := v.(type) {
	case time.Time:
		t = v
	case *time.Time:
		if v == nil {
			return ""
		}
		t = *v
	case *string:
		if v == nil {
			return ""
		}
		return when(*v)
	case string:
		var err error
		if t, err = time.Parse(time.RFC3339, v); err != nil {
			return v
		}
	default:
		return fmt.Sprint(v)
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// pageNames are the templates, one per page; each is parsed with the
// layout.
var pageNames = []string{"home", "search", "category", "provenance", "network", "proposals", "notfound"}

// htmlPages parses the templates on first use, not at start-up: parsing
// them took 6.3 ms of a process's start (GODEBUG=inittrace=1: the
// package's init, 6,319 allocations) and 336 KB, which a stdio server or
// a CLI command, rendering no page, paid before its first answer.
var htmlPages = sync.OnceValue(func() map[string]*template.Template {
	base := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html"))
	m := map[string]*template.Template{}
	for _, n := range pageNames {
		m[n] = template.Must(template.Must(base.Clone()).ParseFS(templateFiles, "templates/"+n+".html"))
	}
	return m
})

// frame is what the layout needs around every page.
type frame struct {
	L       Links
	Title   string
	Curator string
	Nav     string // the page the header marks as current
	Body    any
}

// render writes page name with body into a buffer.
func (s *Site) render(l Links, name, title string, body any) ([]byte, error) {
	cur := s.c.Tools.Published().Registry.Curator().Name
	var b bytes.Buffer
	err := htmlPages()[name].ExecuteTemplate(&b, "layout.html", frame{L: l, Title: title, Curator: cur, Nav: name, Body: body})
	return b.Bytes(), err
}

// ErrNotFound is what Category returns for a slug the registry lacks; its
// page (the closest categories) is returned with it.
var ErrNotFound = errors.New("no such category")

// toolError is the structured answer a tool's error result carries, and
// its text.
func toolError[T any](err error) (*T, string, bool) {
	var te *gen.ToolError
	if !errors.As(err, &te) {
		return nil, "", false
	}
	out, _ := any(te.Structured).(*T)
	return out, te.Text, true
}

// firstLine is a description's first line or sentence, for lists.
func firstLine(d string) string {
	if i := strings.IndexByte(d, '\n'); i >= 0 {
		d = d[:i]
	}
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	return d
}
