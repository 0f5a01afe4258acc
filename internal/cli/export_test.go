package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/frozen"
)

// TestExportHTML: the static site has every page, and its links are
// relative and lead to files the export wrote.
func TestExportHTML(t *testing.T) {
	reg := frozenRegistry(t)
	dir := filepath.Join(t.TempDir(), "site")
	code, _, stderr := run(t, nil, "export", "--format", "html", "--out", dir, "--registry", reg)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{"index.html", "provenance.html", "network.html", "proposals.html", "static/style.css", "static/favicon.svg", "c/rust-learning.html"}
	for _, f := range want {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the export lacks %s: %v", f, err)
		}
	}
	cats, _ := filepath.Glob(filepath.Join(dir, "c", "*.html"))
	if len(cats) != frozen.BasicCategories {
		t.Errorf("%d category pages, want %d", len(cats), frozen.BasicCategories)
	}
	href := regexp.MustCompile(`(?:href|action)="([^"]*)"`)
	for _, page := range append([]string{filepath.Join(dir, "index.html"), filepath.Join(dir, "provenance.html")}, cats...) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("<form")) {
			t.Errorf("%s has a search form, which a static site cannot answer", page)
		}
		for _, m := range href.FindAllSubmatch(data, -1) {
			link := string(m[1])
			if strings.HasPrefix(link, "https://") || strings.HasPrefix(link, "#") {
				continue
			}
			if strings.HasPrefix(link, "/") || strings.Contains(link, "://") {
				t.Errorf("%s: link %q is not relative", page, link)
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), filepath.FromSlash(link))); err != nil {
				t.Errorf("%s: link %q leads to no file the export wrote", page, link)
			}
		}
	}
}

// TestExportMarkdown: one awesome-list file; markup in the curator's text
// is escaped.
func TestExportMarkdown(t *testing.T) {
	data := bytes.Replace(frozen.Registry(frozen.Basic), []byte(`"name": "Learning Rust"`), []byte(`"name": "*Rust* <b>x</b> [y](https://evil.example/) _z_"`), 1)
	reg := filepath.Join(t.TempDir(), "registry.json")
	if err := os.WriteFile(reg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, nil, "export", "--format", "markdown", "--registry", reg)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"# Three good sources, curated by 3gs tests (TEST KEY: public, never trusted)",
		`### \*Rust\* &lt;b>x&lt;/b> \[y\](https://evil.example/) \_z\_`,
		"1. [The Rust Programming Language](<https://doc.rust-lang.org/book/>) (book): ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "<b>") || strings.Contains(stdout, "[y](") {
		t.Errorf("the curator's markup passed into the Markdown")
	}
	if n := strings.Count(stdout, "\n### "); n != frozen.BasicCategories {
		t.Errorf("%d categories in the Markdown, want %d", n, frozen.BasicCategories)
	}
	out := filepath.Join(t.TempDir(), "REGISTRY.md")
	if code, _, stderr := run(t, nil, "export", "--format", "markdown", "--registry", reg, "--out", out); code != ExitOK {
		t.Fatalf("--out: exit %d: %s", code, stderr)
	}
	if written, _ := os.ReadFile(out); string(written) != stdout {
		t.Errorf("--out wrote other bytes than stdout had")
	}
}

func TestExportUsage(t *testing.T) {
	for _, args := range [][]string{
		{"export", "--format", "pdf"},
		{"export", "--format", "html"},
		{"export", "extra"},
	} {
		if code, _, stderr := run(t, nil, args...); code != ExitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want %d with a reason", args, code, stderr, ExitUsage)
		}
	}
}
