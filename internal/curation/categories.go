package curation

import (
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
	changed, err := n.change(actor, gen.AuditEntryActionUpsert, slug, fileOptions{needKey: true}, func(doc *gen.Registry) error {
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

// RemoveCategory removes the category slug, as actor. A slug the
// registry does not have, or its last category, is refused with a
// strictjson.Errors at "slug".
func (n *Node) RemoveCategory(actor, slug string) (*Changed, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.change(actor, gen.AuditEntryActionRemove, slug, fileOptions{needKey: true}, func(doc *gen.Registry) error {
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
