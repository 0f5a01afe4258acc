package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/three-good-sources/3gs/gen"
)

// Stubs are tool handlers whose answers are fixed, for the tests of the
// protocol and the transports (as the official go-sdk tests its server
// with tools that answer "hi"): what a transcript shows then depends on
// neither the registry nor the matcher. Each tool that reads the registry
// answers its schema's example result, the one the generator checks
// against the output schema, with the call's query copied in where the
// output has one; a query or slug that starts with FailPrefix gets that
// result back as a tool error instead. The curator tools and the text
// blocks are the real handlers' (over the frozen registry), which the
// embedded ToolHandlers supplies, as it does any tool added later.
type Stubs struct {
	gen.ToolHandlers
}

// FailPrefix starts a query or slug the stubs answer with a tool error.
const FailPrefix = "fail"

var _ gen.ToolHandlers = Stubs{}

// example is the example result of tool's schema, decoded into T.
func example[T any](tool string) *T {
	t := gen.LookupTool(tool)
	if t == nil {
		panic("testserver: no tool " + tool)
	}
	v := new(T)
	if err := json.Unmarshal([]byte(t.Examples.Result), v); err != nil {
		panic(fmt.Sprintf("testserver: the example result of %s does not decode: %v", tool, err))
	}
	return v
}

// answer is out, or out as a tool error when key asks for one.
func answer[T any, P interface {
	*T
	gen.ToolOutput
}](key string, out P) (P, error) {
	if strings.HasPrefix(key, FailPrefix) {
		return nil, &gen.ToolError{Text: "stub: " + key + " fails, as asked", Structured: out}
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// GetSources answers the example result, for the query or the slug asked.
func (Stubs) GetSources(_ context.Context, in *gen.GetSourcesInput) (*gen.GetSourcesOutput, error) {
	out := example[gen.GetSourcesOutput](gen.ToolGetSources)
	out.Query = deref(in.Query)
	return answer(deref(in.Query)+deref(in.Slug), out)
}

// GetFederatedSources answers the example result for the query asked.
func (Stubs) GetFederatedSources(_ context.Context, in *gen.GetFederatedSourcesInput) (*gen.GetFederatedSourcesOutput, error) {
	out := example[gen.GetFederatedSourcesOutput](gen.ToolGetFederatedSources)
	out.Query = in.Query
	return answer(in.Query, out)
}

// ExplainMatch answers the example result for the query asked.
func (Stubs) ExplainMatch(_ context.Context, in *gen.ExplainMatchInput) (*gen.ExplainMatchOutput, error) {
	out := example[gen.ExplainMatchOutput](gen.ToolExplainMatch)
	out.Query = in.Query
	return answer(in.Query, out)
}

// ListCategories answers the example result; a filter starting with
// FailPrefix gets it as a tool error.
func (Stubs) ListCategories(_ context.Context, in *gen.ListCategoriesInput) (*gen.ListCategoriesOutput, error) {
	return answer(deref(in.Filter), example[gen.ListCategoriesOutput](gen.ToolListCategories))
}

// GetProvenance answers the example result.
func (Stubs) GetProvenance(context.Context, *gen.GetProvenanceInput) (*gen.GetProvenanceOutput, error) {
	return example[gen.GetProvenanceOutput](gen.ToolGetProvenance), nil
}

// GetEndorsements answers the example result.
func (Stubs) GetEndorsements(context.Context, *gen.GetEndorsementsInput) (*gen.GetEndorsementsOutput, error) {
	return example[gen.GetEndorsementsOutput](gen.ToolGetEndorsements), nil
}
