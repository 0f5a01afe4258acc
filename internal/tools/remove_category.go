package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// RemoveCategory implements gen.ToolHandlers.
func (h *Handlers) RemoveCategory(ctx context.Context, in *gen.RemoveCategoryInput) (*gen.RemoveCategoryOutput, error) {
	state := func(s *snapshot) *gen.RemoveCategoryOutput { c := changeOutput(s, in.Slug); return &c }
	if h.edit == nil {
		return nil, editFailure(h.noFile(), state(h.cur.Load()))
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
		return nil, editFailure("Cannot change the registry: "+err.Error(), state(h.cur.Load()))
	}
	return state(next), nil
}

// RemoveCategoryText implements gen.ToolHandlers.
func (h *Handlers) RemoveCategoryText(out *gen.RemoveCategoryOutput) string {
	return fmt.Sprintf("Removed category %s. %s", out.Slug, changeText(out.RegistryVersion, out.Updated, out.CategoryCount, out.RegistrySHA256, out.Signed))
}
