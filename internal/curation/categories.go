package curation

import (
	"slices"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// Upserted is what UpsertCategory did.
type Upserted struct {
	*Changed
	// Created: the category is new; otherwise it replaced one.
	Created bool
}

// UpsertCategory adds the category slug, or replaces it, as actor. The
// category's own problems come back first, as strictjson.Errors under
// "category" (the argument that holds it), before anything is read or
// written; problems of the whole registry keep their paths.
func (n *Node) UpsertCategory(actor, slug string, c gen.Category) (*Upserted, error) {
	if errs, _ := registry.CheckCategory("category", slug, c); len(errs) > 0 {
		return nil, errs
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	out := &Upserted{}
	o := fileOptions{needKey: true, describe: func() string { return UpsertDetail(slug, out.Created) }}
	changed, err := n.change(actor, gen.AuditActionUpsert, slug, o, func(doc *gen.Registry) error {
		_, exists := doc.Categories[slug]
		out.Created = !exists
		doc.Categories[slug] = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Changed = changed
	return out, nil
}

// UpsertDetail is what the audit log entry of an upsert says it was:
// "add category SLUG" for a new one, "replace category SLUG" otherwise.
func UpsertDetail(slug string, created bool) string {
	if created {
		return "add category " + slug
	}
	return "replace category " + slug
}

// RemoveCategory removes the category slug, as actor. A slug the
// registry does not have, or its last category, is refused with a
// strictjson.Errors at "slug".
func (n *Node) RemoveCategory(actor, slug string) (*Changed, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.change(actor, gen.AuditActionRemove, slug, fileOptions{needKey: true}, func(doc *gen.Registry) error {
		if _, ok := doc.Categories[slug]; !ok {
			return strictjson.Errors{{Path: "slug", Reason: "no category has this slug; list_categories shows them"}}
		}
		if len(doc.Categories) == 1 {
			return strictjson.Errors{{Path: "slug", Reason: "this is the registry's only category, and a registry keeps at least one"}}
		}
		delete(doc.Categories, slug)
		return nil
	})
}

// Move is one source to move: the source ranked Rank at URL From now
// answers at To (a permanent redirect 3gs check saw).
type Move struct {
	Rank     int
	From, To string
}

// ApplyRedirects moves the sources of the category slug as moves say
// (3gs check --apply-redirects), one change recorded as an upsert of the
// category whose entry says detail, the redirects in words. A source no
// longer at that rank and URL is left as it is.
func (n *Node) ApplyRedirects(slug string, moves []Move, detail string) (*Changed, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.change(n.actor(), gen.AuditActionUpsert, slug, fileOptions{detail: detail, needKey: true}, func(doc *gen.Registry) error {
		cat := doc.Categories[slug]
		// A copy: the document shares its slices with the registry read.
		cat.Sources = slices.Clone(cat.Sources)
		for _, m := range moves {
			if j := slices.IndexFunc(cat.Sources, func(s gen.Source) bool { return s.Rank == m.Rank && s.URL == m.From }); j >= 0 {
				cat.Sources[j].URL = m.To
			}
		}
		doc.Categories[slug] = cat
		return nil
	})
}
