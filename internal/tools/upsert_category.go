package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// UpsertCategory implements gen.ToolHandlers (curation.Node.UpsertCategory).
func (h *Handlers) UpsertCategory(ctx context.Context, in *gen.UpsertCategoryInput) (*gen.UpsertCategoryOutput, error) {
	upsertState := func(s store.Served, created bool) *gen.UpsertCategoryOutput {
		c := changeOutput(s, in.Slug)
		return &gen.UpsertCategoryOutput{Slug: c.Slug, Created: created, RegistryVersion: c.RegistryVersion, Updated: c.Updated, RegistrySHA256: c.RegistrySHA256, CategoryCount: c.CategoryCount, Signed: c.Signed}
	}
	if h.node == nil {
		return nil, editFailure(h.noFile(), upsertState(h.cur.Load().served(), false))
	}
	done, err := h.node.UpsertCategory(auth.CallerFrom(ctx).Name, in.Slug, in.Category)
	var errs strictjson.Errors
	switch {
	case errors.As(err, &errs):
		return nil, err // the caller's category breaks a rule: Invalid params
	case err != nil:
		return nil, editFailure("Cannot change the registry: "+storeProblem(err), upsertState(h.cur.Load().served(), false))
	}
	return upsertState(done.New, done.Created), nil
}

// UpsertCategoryText implements gen.ToolHandlers.
func (h *Handlers) UpsertCategoryText(out *gen.UpsertCategoryOutput) string {
	verb := "Replaced"
	if out.Created {
		verb = "Added"
	}
	return fmt.Sprintf("%s category %s. %s", verb, out.Slug, changeText(out.RegistryVersion, out.Updated, out.CategoryCount, out.RegistrySHA256, out.Signed))
}
