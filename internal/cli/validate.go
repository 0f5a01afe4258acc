package cli

import (
	"context"
	"errors"
	"fmt"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// validateOptions are validate's flags.
type validateOptions struct {
	registryFile
}

func validateFlags(f *Flags) {
	o := options[validateOptions](f)
	o.registryFile.flags(f, "registry file to check when no PATH is given; none means the embedded registry.json")
}

// runValidate checks each registry file and prints every problem, one per
// line, as FILE: PATH: REASON. With no file it checks what the server would
// load: --registry / REGISTRY_PATH, or the embedded default.
func runValidate(_ context.Context, env *Env, f *Flags) int {
	o := options[validateOptions](f)
	limit, ok := o.sizeLimit(f)
	if !ok {
		return ExitUsage
	}
	paths := f.Args()
	if p := o.registry; len(paths) == 0 && p != "" {
		paths = []string{p}
	}
	if len(paths) == 0 {
		return report(env, "embedded registry.json", func() (*registry.Registry, error) { return registry.Load(threegs.DefaultRegistry) })
	}
	code := ExitOK
	for _, p := range paths {
		limitMemoryFor(env, p)
		if c := report(env, p, func() (*registry.Registry, error) { return registry.LoadFileLimit(p, limit) }); c != ExitOK {
			code = c
		}
	}
	return code
}

func report(env *Env, name string, load func() (*registry.Registry, error)) int {
	r, err := load()
	if err == nil {
		// Worth a second look, but a curator may mean them: they do not fail.
		for _, w := range registry.Warnings(r) {
			fmt.Fprintf(env.Stdout, "warning: %s: %s\n", name, w)
		}
		fmt.Fprintf(env.Stdout, "OK: %s: version %s, %d %s\n", name, r.Version(), len(r.Categories()), plural(len(r.Categories()), "category", "categories"))
		return ExitOK
	}
	var errs strictjson.Errors
	if !errors.As(err, &errs) {
		fmt.Fprintf(env.Stdout, "FAIL: %s: %v\n", name, err)
		if errors.Is(err, safefile.ErrTooLarge) {
			_, fix := registryProblem(name, err, "")
			fmt.Fprintf(env.Stdout, "Fix: %s.\n", fix)
		}
		return ExitFail
	}
	for _, e := range errs {
		fmt.Fprintf(env.Stdout, "%s: %s\n", name, e)
	}
	fmt.Fprintf(env.Stdout, "FAIL: %s: %d %s\n", name, len(errs), plural(len(errs), "problem", "problems"))
	return ExitFail
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
