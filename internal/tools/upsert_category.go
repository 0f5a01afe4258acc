package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// UpsertCategory implements gen.ToolHandlers.
func (h *Handlers) UpsertCategory(ctx context.Context, in *gen.UpsertCategoryInput) (*gen.UpsertCategoryOutput, error) {
	upsertState := func(s *snapshot, created bool) *gen.UpsertCategoryOutput {
		c := changeOutput(s, in.Slug)
		return &gen.UpsertCategoryOutput{Slug: c.Slug, Created: created, RegistryVersion: c.RegistryVersion, Updated: c.Updated, RegistrySHA256: c.RegistrySHA256, CategoryCount: c.CategoryCount, Signed: c.Signed}
	}
	if h.edit == nil {
		return nil, editFailure(h.noFile(), upsertState(h.cur.Load(), false))
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
		return nil, editFailure("Cannot change the registry: "+err.Error(), upsertState(h.cur.Load(), false))
	}
	return upsertState(next, created), nil
}

// UpsertCategoryText implements gen.ToolHandlers.
func (h *Handlers) UpsertCategoryText(out *gen.UpsertCategoryOutput) string {
	verb := "Replaced"
	if out.Created {
		verb = "Added"
	}
	return fmt.Sprintf("%s category %s. %s", verb, out.Slug, changeText(out.RegistryVersion, out.Updated, out.CategoryCount, out.RegistrySHA256, out.Signed))
}
