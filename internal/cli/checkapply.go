package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/filelock"
	"github.com/three-good-sources/3gs/internal/linkcheck"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/tools"
)

// applyFlags are check's flags for --apply-redirects: those of every
// command that re-signs a registry.
func applyFlags(f *Flags) {
	f.Bool("apply-redirects", "THREEGS_CHECK_APPLY_REDIRECTS", "write each permanent redirect whose new URL answered into the registry file, one audited, signed change per category (as upsert_category makes), raising the version; needs --key-file when the registry is signed")
	keyFlag(f, "with --apply-redirects: the curator's secret key file, to sign each change")
	f.String("expires", "THREEGS_EXPIRES", signature.DefaultValidity.String(), "with --apply-redirects: how long the new signature vouches for the registry")
	auditLogFlag(f)
}

// redirect is one source to move.
type redirect struct {
	rank     int
	from, to string
}

// redirectsByCategory are the permanent redirects of results whose new
// URL answered, by category slug; skipped are the others.
func redirectsByCategory(results []linkcheck.Result) (by map[string][]redirect, skipped []linkcheck.Result) {
	by = map[string][]redirect{}
	for _, r := range results {
		if r.Status != linkcheck.Redirected || r.Location == "" {
			continue
		}
		if !r.LocationAnswered {
			skipped = append(skipped, r)
			continue
		}
		by[r.Category] = append(by[r.Category], redirect{r.Rank, r.URL, r.Location})
	}
	return by, skipped
}

// applyRedirects writes the redirects into the registry file at path
// through the curator tools' change path (tools.Handlers.UpsertCategory):
// for each category, an audit entry, the new version and the signature,
// taken back when the write fails. It returns the redirects applied.
func applyRedirects(ctx context.Context, env *Env, f *Flags, path string, limit int64, key ed25519.PrivateKey, from string, results []linkcheck.Result) ([]redirect, bool) {
	fail := func(format string, args ...any) ([]redirect, bool) {
		fmt.Fprintf(env.Stderr, "3gs check: not applied: "+format+"\n", args...)
		return nil, false
	}
	stdout := env.Stdout
	if flagBool(f, "json") {
		stdout = env.Stderr // stdout holds the JSON document alone
	}
	by, skipped := redirectsByCategory(results)
	for _, r := range skipped {
		fmt.Fprintf(env.Stderr, "3gs check: %s moved to %s, which was not checked (another host at an address a check does not follow, or too many redirects); not applied: check it and edit the URL by hand.\n", r.URL, r.Location)
	}
	if len(by) == 0 {
		fmt.Fprintln(stdout, "\nNo permanent redirect to apply.")
		return nil, true
	}
	validity, err := validityFlag(f)
	if err != nil {
		return fail("%v", err)
	}
	// The registry is read under its lock, so nothing written meanwhile is
	// lost; a server holding the lock edits it itself.
	lock, err := filelock.TryLock(path)
	if err != nil {
		if errors.Is(err, filelock.ErrHeld) {
			return fail("%v.\nA 3gs server edits this registry: stop it and run 3gs check --apply-redirects again, or make the edits through its upsert_category tool.", err)
		}
		return fail("%v", err)
	}
	defer lock.Unlock()
	srvd, ok := loadServed(env, "check", path, limit)
	if !ok {
		return nil, false
	}
	st := srvd.sig
	_, named := srvd.reg.CuratorKey()
	switch {
	case st.Signed() && !st.Verified:
		return fail("%s%s does not verify (%v), so %s changed since it was signed; signing the redirects would sign those changes too.\nCheck it with 3gs verify %s; if the changes are yours, sign them with 3gs sign --key-file KEY %s, then run this again.",
			path, signature.Suffix, st.Problem, path, signature.ShellQuote(path), signature.ShellQuote(path))
	case named && !st.Signed():
		return fail("%s names the curator key %s but has no signature; sign it first: 3gs sign --key-file KEY %s", path, srvd.reg.Curator().Pubkey, signature.ShellQuote(path))
	case named && key == nil:
		return fail("%s is signed by its curator, and the changes must be signed too: give the curator key with --key-file KEY (or %s).", path, secretKeyEnv)
	}
	var anchor ed25519.PublicKey
	if key != nil {
		if err := signature.CheckCurator(srvd.reg, pkarr.Public(key)); err != nil {
			return fail("the key from %s (%s) cannot sign %s: its curator.pubkey is %s.\nPass the curator's own key with --key-file.", from, pkarr.URI(pkarr.Public(key)), path, srvd.reg.Curator().Pubkey)
		}
		anchor = pkarr.Public(key)
	}
	reg := srvd.reg
	edit := &tools.EditConfig{Path: srvd.path, Key: key, AuditLog: auditLogPath(f, path),
		Validity: validity, MaxRegistryBytes: limit, Anchor: anchor, AnchorFrom: "the public half of the curator key file"}
	h := tools.New(tools.Config{Registry: reg, Matcher: matcher.New(reg), Signature: st, Files: srvd.files, Modified: srvd.modified, Edit: edit})
	notes, err := h.OpenAuditLog()
	if err != nil {
		return fail("%v", err)
	}
	for _, n := range notes {
		fmt.Fprintf(env.Stderr, "3gs check: %s\n", n)
	}

	slugs := make([]string, 0, len(by))
	for slug := range by {
		slugs = append(slugs, slug)
	}
	slices.Sort(slugs)
	var applied []redirect
	for _, slug := range slugs {
		c, ok := reg.Category(slug)
		if !ok {
			fmt.Fprintf(env.Stderr, "3gs check: category %s is no longer in %s; its redirects were not applied.\n", slug, path)
			continue
		}
		cat := *c.Category
		cat.Sources = slices.Clone(c.Sources)
		var moved []redirect
		for _, r := range by[slug] {
			i := slices.IndexFunc(cat.Sources, func(s gen.Source) bool { return s.Rank == r.rank && s.URL == r.from })
			if i < 0 {
				fmt.Fprintf(env.Stderr, "3gs check: %s changed since it was checked; not applied.\n", r.from)
				continue
			}
			cat.Sources[i].URL = r.to
			moved = append(moved, r)
		}
		if len(moved) == 0 {
			continue
		}
		out, err := h.UpsertCategory(ctx, &gen.UpsertCategoryInput{Slug: slug, Category: cat})
		if err != nil {
			var te *gen.ToolError
			msg := err.Error()
			if errors.As(err, &te) {
				msg = te.Text
			}
			if len(applied) > 0 {
				fmt.Fprintf(env.Stderr, "3gs check: the redirects of %s were applied, each category a signed change of its own; ", strings.Join(categoriesOf(applied, by), ", "))
			}
			fmt.Fprintf(env.Stderr, "3gs check: the redirects of %s were not applied: %s\n", slug, msg)
			return applied, false
		}
		for _, r := range moved {
			fmt.Fprintf(stdout, "Applied: categories.%s: %s → %s\n", slug, r.from, r.to)
		}
		signed := "unsigned"
		if out.Signed {
			signed = "signed"
		}
		fmt.Fprintf(stdout, "  %s version %s, %s, recorded in the audit log %s\n", path, out.RegistryVersion, signed, edit.AuditLog)
		applied = append(applied, moved...)
	}
	return applied, true
}

// categoriesOf are the slugs the applied redirects belong to.
func categoriesOf(applied []redirect, by map[string][]redirect) []string {
	var out []string
	for slug, rs := range by {
		for _, r := range rs {
			if slices.Contains(applied, r) {
				out = append(out, slug)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}
