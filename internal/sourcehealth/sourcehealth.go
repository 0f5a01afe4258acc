// Package sourcehealth keeps the outcome of the last link check of a
// registry's sources (internal/linkcheck) in a health file beside the
// registry, REGISTRY.health.json (schema/sourcehealth.schema.json), and
// answers from it: each source's status for get_sources, the counts for
// /health and 3gs doctor, and what a page looked like for the next
// check's "changed".
//
// The file is 3gs's own: written atomically (a reader sees the old or
// the new file, never a mix), never through a symbolic link, bounded in
// size, and by one writer at a time (Lock): a server checking in the
// background, or one 3gs check.
package sourcehealth

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/linkcheck"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// Suffix names the health file beside its registry.
const Suffix = ".health.json"

// MaxSize bounds a health file: a few hundred bytes a source, for the
// 300,000 sources of a registry at its own bound, with room to spare.
const MaxSize = 256 << 20

// PathFor is the health file of the registry at registryPath.
func PathFor(registryPath string) string { return registryPath + Suffix }

// Read reads and checks the health file at path. A file that does not
// exist is nil and no error.
func Read(path string) (*gen.Sourcehealth, error) {
	data, err := safefile.ReadNoFollow(path, MaxSize, "source health file")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decode(path, data)
}

// decode checks data, read from the health file at path.
func decode(path string, data []byte) (*gen.Sourcehealth, error) {
	doc, err := gen.DecodeSourcehealth(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not a source health file: %v; remove it, and the next 3gs check writes it again", path, err)
	}
	return doc, nil
}

// Lock makes the caller the health file's one writer until Unlock. The
// error wraps safefile.ErrHeld when another process writes it.
func Lock(path string) (*safefile.Lock, error) { return safefile.TryLock(path) }

// Doc is the outcome of a check of reg's sources as the schema has it.
func Doc(reg *registry.Registry, results []linkcheck.Result, now time.Time) *gen.Sourcehealth {
	doc := &gen.Sourcehealth{CheckedAt: now.Truncate(time.Second), RegistryVersion: reg.Version(), Sources: make([]gen.CheckedSource, 0, len(results))}
	if c := reg.Curator().Name; c != "" {
		if r := []rune(c); len(r) > 200 {
			c = string(r[:200])
		}
		doc.Curator = &c
	}
	for _, r := range results {
		cs := gen.CheckedSource{Category: r.Category, Rank: r.Rank, URL: r.URL, Status: gen.CheckStatus(r.Status), CheckedAt: r.CheckedAt.Truncate(time.Second)}
		// The reason may quote, and the location and title are, what the
		// source's server sent: kept and published without the
		// characters that hide or reorder text (registry.Visible, as
		// agents are shown text).
		if r.Reason != "" {
			reason := registry.Visible(r.Reason)
			cs.Reason = &reason
		}
		if r.HTTPStatus >= 100 && r.HTTPStatus <= 599 {
			st := r.HTTPStatus
			cs.HttpStatus = &st
		}
		if r.Location != "" && len(r.Location) <= 2048 {
			loc := registry.Visible(r.Location)
			cs.Location = &loc
		}
		if r.Title != "" {
			t := registry.Visible(r.Title)
			cs.Title = &t
		}
		if r.Size >= 0 && r.Size <= 1<<50 {
			n := int(r.Size)
			cs.Size = &n
		}
		doc.Sources = append(doc.Sources, cs)
	}
	Count(doc)
	return doc
}

// Count sets doc's summary from its sources.
func Count(doc *gen.Sourcehealth) {
	doc.Summary = gen.SourcehealthSummary{}
	for _, c := range doc.Sources {
		switch c.Status {
		case gen.CheckStatusOk:
			doc.Summary.Ok++
		case gen.CheckStatusRedirected:
			doc.Summary.Redirected++
		case gen.CheckStatusGone:
			doc.Summary.Gone++
		case gen.CheckStatusError:
			doc.Summary.Error++
		case gen.CheckStatusChanged:
			doc.Summary.Changed++
		}
	}
}

// Merge is the health file after a check of some of reg's categories
// (3gs check --only): the entries of next, and those of old for the
// other categories whose source is still in reg at that rank and URL.
func Merge(old, next *gen.Sourcehealth, reg *registry.Registry) *gen.Sourcehealth {
	if old == nil {
		return next
	}
	checked := map[string]bool{}
	for _, c := range next.Sources {
		checked[c.Category] = true
	}
	out := *next
	out.Sources = nil
	var keep []gen.CheckedSource
	for _, c := range old.Sources {
		if checked[c.Category] || !StillListed(reg, c) {
			continue
		}
		keep = append(keep, c)
	}
	// Registry order: categories by slug, then rank.
	i, j := 0, 0
	for i < len(keep) || j < len(next.Sources) {
		if j == len(next.Sources) || (i < len(keep) && before(keep[i], next.Sources[j])) {
			out.Sources = append(out.Sources, keep[i])
			i++
		} else {
			out.Sources = append(out.Sources, next.Sources[j])
			j++
		}
	}
	Count(&out)
	return &out
}

func before(a, b gen.CheckedSource) bool {
	if a.Category != b.Category {
		return a.Category < b.Category
	}
	return a.Rank < b.Rank
}

// StillListed reports whether reg still lists c's URL at its rank: a
// source replaced since the check is no longer what the result is about.
func StillListed(reg *registry.Registry, c gen.CheckedSource) bool {
	cat, ok := reg.Category(c.Category)
	if !ok {
		return false
	}
	for _, s := range cat.Sources {
		if s.Rank == c.Rank && s.URL == c.URL {
			return true
		}
	}
	return false
}

// Previous is what each URL looked like at the check doc records, for
// the next check's "changed". Only pages that answered count.
func Previous(doc *gen.Sourcehealth) map[string]linkcheck.Previous {
	if doc == nil {
		return nil
	}
	out := make(map[string]linkcheck.Previous, len(doc.Sources))
	for _, c := range doc.Sources {
		if c.Status != gen.CheckStatusOk && c.Status != gen.CheckStatusChanged {
			continue
		}
		p := linkcheck.Previous{Size: -1}
		if c.Title != nil {
			p.Title = *c.Title
		}
		if c.Size != nil {
			p.Size = int64(*c.Size)
		}
		out[c.URL] = p
	}
	return out
}

// Entry is what the last check said of one source.
type Entry struct {
	Status    gen.CheckStatus
	CheckedAt time.Time
}

// Index answers, for a source URL, what the last check said of it.
type Index struct {
	byURL     map[string]Entry
	Summary   gen.SourcehealthSummary
	CheckedAt time.Time
}

// NewIndex indexes doc; nil for none.
func NewIndex(doc *gen.Sourcehealth) *Index {
	if doc == nil {
		return nil
	}
	ix := &Index{byURL: make(map[string]Entry, len(doc.Sources)), Summary: doc.Summary}
	ix.CheckedAt = doc.CheckedAt
	for _, c := range doc.Sources {
		ix.byURL[c.URL] = Entry{Status: c.Status, CheckedAt: c.CheckedAt}
	}
	return ix
}

// Lookup is what the last check said of url.
func (ix *Index) Lookup(url string) (Entry, bool) {
	if ix == nil {
		return Entry{}, false
	}
	e, ok := ix.byURL[url]
	return e, ok
}

// SummaryLine is "46 ok, 1 gone, 1 redirected": each status some source
// has, ok first.
func SummaryLine(s gen.SourcehealthSummary) string {
	var parts []string
	for _, p := range []struct {
		n    int
		name string
	}{{s.Ok, "ok"}, {s.Redirected, "redirected"}, {s.Changed, "changed"}, {s.Gone, "gone"}, {s.Error, "error"}} {
		if p.n > 0 {
			parts = append(parts, strconv.Itoa(p.n)+" "+p.name)
		}
	}
	if len(parts) == 0 {
		return "none checked"
	}
	return strings.Join(parts, ", ")
}

// Ago says how long before now t was, coarsely: "just now", "5 minutes
// ago", "3 hours ago", "2 days ago".
func Ago(t, now time.Time) string {
	d := now.Sub(t)
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one + " ago"
		}
		return strconv.FormatInt(n, 10) + " " + one + "s ago"
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return unit(int64(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return unit(int64(d/time.Hour), "hour")
	default:
		return unit(int64(d/(24*time.Hour)), "day")
	}
}
