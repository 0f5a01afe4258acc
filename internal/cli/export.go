package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/pages"
	"github.com/three-good-sources/3gs/internal/tools"
)

// exportOptions are export's flags.
type exportOptions struct {
	registryFile
	format string
	out    string
}

func exportFlags(f *Flags) {
	o := options[exportOptions](f)
	o.registryFile.flags(f, "registry file to export; none means the embedded registry.json")
	f.StringVar(&o.format, "format", "THREEGS_EXPORT_FORMAT", "html", "html: the pages 3gs serve --http shows, as a static site in --out DIR; markdown: one README-style file, to --out FILE or stdout")
	f.StringVar(&o.out, "out", "THREEGS_EXPORT_OUT", "", "where to write: a directory for html (required), a file for markdown (none means stdout)")
}

// runExport writes the registry for people without a server: the pages
// of serve --http as a static site, or one Markdown file. Both are
// rendered by internal/pages from the same tools the server answers with.
func runExport(ctx context.Context, env *Env, f *Flags) int {
	o := options[exportOptions](f)
	if len(f.Args()) > 0 {
		fmt.Fprintf(env.Stderr, "3gs export: takes no arguments (got %q); name the registry with --registry PATH\n", f.Args()[0])
		return ExitUsage
	}
	if o.format != "html" && o.format != "markdown" {
		fmt.Fprintf(env.Stderr, "3gs export: --format (THREEGS_EXPORT_FORMAT) must be html or markdown, got %q\n", o.format)
		return ExitUsage
	}
	if o.format == "html" && o.out == "" {
		fmt.Fprintln(env.Stderr, "3gs export: --format html writes a directory of pages: name it with --out DIR, e.g. 3gs export --format html --out site")
		return ExitUsage
	}
	limit, ok := o.sizeLimit(f)
	if !ok {
		return ExitUsage
	}
	s, err := app.Load(o.registry, limit)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs export: %v\n", err)
		return ExitFail
	}
	h := tools.New(tools.Config{
		Registry: s.Reg, Matcher: matcher.New(s.Reg), Threshold: tools.DefaultThreshold,
		Signature: s.Sig, Files: s.Files, Modified: s.Modified,
	})
	site := pages.New(pages.Config{Tools: h})
	if o.format == "markdown" {
		md, err := site.Markdown(ctx)
		if err != nil {
			fmt.Fprintf(env.Stderr, "3gs export: %v\n", err)
			return ExitFail
		}
		if o.out == "" {
			env.Stdout.Write(md)
			return ExitOK
		}
		if err := os.WriteFile(o.out, md, 0o644); err != nil {
			fmt.Fprintf(env.Stderr, "3gs export: %v\n", err)
			return ExitFail
		}
		fmt.Fprintf(env.Stderr, "Wrote %s (%d categories, %d bytes).\n", o.out, len(s.Reg.Categories()), len(md))
		return ExitOK
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fmt.Fprintf(env.Stderr, "3gs export: cannot create %s: %v\n", o.out, err)
		return ExitFail
	}
	n, err := site.Export(ctx, o.out)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs export: writing %s: %v\n", o.out, err)
		return ExitFail
	}
	fmt.Fprintf(env.Stderr, "Wrote %d files to %s: open %s/index.html, or publish the directory as it is (GitHub Pages, any static host).\n", n, o.out, o.out)
	return ExitOK
}
