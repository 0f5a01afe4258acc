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

// RemoveCategory implements gen.ToolHandlers (curation.Node.RemoveCategory).
func (h *Handlers) RemoveCategory(ctx context.Context, in *gen.RemoveCategoryInput) (*gen.RemoveCategoryOutput, error) {
	state := func(s store.Served) *gen.RemoveCategoryOutput { c := changeOutput(s, in.Slug); return &c }
	if h.node == nil {
		return nil, editFailure(h.noFile(), state(h.cur.Load().served()))
	}
	done, err := h.node.RemoveCategory(auth.CallerFrom(ctx).Name, in.Slug)
	var errs strictjson.Errors
	switch {
	case errors.As(err, &errs):
		return nil, err
	case err != nil:
		return nil, editFailure("Cannot change the registry: "+storeProblem(err), state(h.cur.Load().served()))
	}
	return state(done.New), nil
}

// RemoveCategoryText implements gen.ToolHandlers.
func (h *Handlers) RemoveCategoryText(out *gen.RemoveCategoryOutput) string {
	return fmt.Sprintf("Removed category %s. %s", out.Slug, changeText(out.RegistryVersion, out.Updated, out.CategoryCount, out.RegistrySHA256, out.Signed))
}
