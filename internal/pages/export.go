package pages

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/three-good-sources/3gs/gen"
)

// Export writes the pages as a static site under dir: index.html (and
// index-N.html past the first PageSize categories), c/SLUG.html for each
// category, provenance.html, network.html, proposals.html and static/.
// Links between them are relative, so the site works from any directory
// or host (GitHub Pages, a file:// URL). It returns how many files it
// wrote.
func (s *Site) Export(ctx context.Context, dir string) (int, error) {
	files := 0
	write := func(name string, data []byte) error {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		files++
		return os.WriteFile(p, data, 0o644)
	}
	top, sub := Links{Static: true}, Links{Static: true, Root: "../"}
	cats := s.c.Tools.Published().Registry.Categories()
	for n := 1; n == 1 || (n-1)*PageSize < len(cats); n++ {
		page, err := s.Home(ctx, top, n, "")
		if err != nil {
			return files, err
		}
		if err := write(strings.TrimPrefix(top.List(n), top.Root), page); err != nil {
			return files, err
		}
	}
	for _, c := range cats {
		page, err := s.Category(ctx, sub, c.Slug)
		if err != nil {
			return files, fmt.Errorf("category %s: %w", c.Slug, err)
		}
		if err := write("c/"+c.Slug+".html", page); err != nil {
			return files, err
		}
	}
	for _, p := range []struct {
		name   string
		render func(context.Context, Links) ([]byte, error)
	}{{"provenance", s.Provenance}, {"network", s.Network}, {"proposals", s.Proposals}} {
		page, err := p.render(ctx, top)
		if err != nil {
			return files, err
		}
		if err := write(p.name+".html", page); err != nil {
			return files, err
		}
	}
	if err := write("static/style.css", CSS); err != nil {
		return files, err
	}
	return files, write("static/favicon.svg", Favicon)
}

// Markdown is the registry as one README-style file, in the shape of an
// awesome-list: what it is, then the categories under their headings,
// each with its three sources, linked, and why. Everything the curator
// wrote is escaped, so it reads as text and never as markup.
func (s *Site) Markdown(ctx context.Context) ([]byte, error) {
	reg := s.c.Tools.Published().Registry
	all := reg.Categories()
	var b strings.Builder
	prov, err := s.c.Tools.GetProvenance(ctx, &gen.GetProvenanceInput{})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&b, "# Three good sources, curated by %s\n\n%s\n\n", mdText(prov.Curator.Name), mdLine(Purpose))
	fmt.Fprintf(&b, "%d categories, version %s, last changed %s. Curator key: `%s`", len(all), mdText(prov.Version), mdText(prov.Updated), mdCode(prov.Curator.Pubkey))
	if prov.Verified {
		b.WriteString(" (signature verified when this file was written).\n")
	} else {
		b.WriteString(" (signature not verified when this file was written).\n")
	}
	for n := 1; (n-1)*PageSize < len(all); n++ {
		home, err := s.homeBody(ctx, n, "")
		if err != nil {
			return nil, err
		}
		for _, g := range home.Groups {
			fmt.Fprintf(&b, "\n## %s\n", mdText(g.Heading))
			for _, c := range g.Cats {
				cb, err := s.categoryBody(ctx, c.Slug)
				if err != nil && !errors.Is(err, ErrNotFound) {
					return nil, err
				}
				fmt.Fprintf(&b, "\n### %s\n\n", mdText(c.Name))
				if cb == nil || cb.Out == nil {
					if cb != nil && cb.Problem != "" {
						fmt.Fprintf(&b, "%s\n", mdLine(cb.Problem))
					}
					continue
				}
				fmt.Fprintf(&b, "%s\n\n", mdLine(deref(cb.Out.Description)))
				for _, src := range cb.Out.Sources {
					fmt.Fprintf(&b, "%d. %s (%s): %s\n", src.Rank, mdLink(src.Name, src.URL), mdText(src.Type), mdText(src.Why))
				}
			}
		}
	}
	return []byte(b.String()), nil
}

// mdLine escapes s for Markdown text that starts a line: the characters that open emphasis,
// code, links and tables get a backslash wherever they are; those that
// start a block (a heading, a list, a quote) get one where s starts; <
// and & become entities, so no HTML passes; and line breaks become
// spaces, so no line of s starts a block of its own.
func mdLine(s string) string { return mdEscape(s, true) }

// mdText is s escaped for the middle of a line (see mdLine).
func mdText(s string) string { return mdEscape(s, false) }

func mdEscape(s string, lineStart bool) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '|', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '<':
			b.WriteString("&lt;")
		case '&':
			b.WriteString("&amp;")
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		case '-', '+', '=', '#', '>':
			if lineStart && i == 0 {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case '.', ')':
			// "1." or "1)" at the start would begin a numbered list.
			if lineStart && i > 0 && strings.TrimLeft(s[:i], "0123456789") == "" {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode is s for a code span: backticks and line breaks would end it.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "\n", " ", "\r", " ").Replace(s)
}

// mdLink is a link to url with text name when url is http(s); otherwise
// the name, with the URL as code, which no renderer follows.
func mdLink(name, url string) string {
	if !httpURL(url) {
		return mdText(name) + " `" + mdCode(url) + "`"
	}
	// The destination in angle brackets: only <, > and line breaks can
	// end it early, and %-encoding them keeps the URL the same.
	dest := strings.NewReplacer("<", "%3C", ">", "%3E", "\n", "%0A", "\r", "%0D", " ", "%20").Replace(url)
	return "[" + mdText(name) + "](<" + dest + ">)"
}
