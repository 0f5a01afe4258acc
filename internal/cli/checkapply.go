package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/filelock"
	"github.com/three-good-sources/3gs/internal/linkcheck"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
)

// applyOptions are check's flags for --apply-redirects: those of every
// command that re-signs a registry.
type applyOptions struct {
	on       bool
	key      keyOptions
	expires  durationFlag
	auditLog string
}

func applyFlags(f *Flags, o *applyOptions) {
	f.BoolVar(&o.on, "apply-redirects", "THREEGS_CHECK_APPLY_REDIRECTS", "write each permanent redirect whose new URL answered into the registry file, one audited, signed change per category (as upsert_category makes), raising the version; needs --key-file when the registry is signed")
	keyFlag(f, &o.key, "the curator's secret key file: it signs the health file written (REGISTRY.health.json.sig, which endorsing servers check before showing your sources' health) and, with --apply-redirects, each change")
	expiresFlag(f, &o.expires, "with --apply-redirects: how long the new signature vouches for the registry")
	auditLogFlag(f, &o.auditLog)
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

// applier writes a check's redirects into the registry file at path.
type applier struct {
	env    *Env
	stdout io.Writer // stderr when stdout holds JSON
	path   string
	signer // the key, where it came from, --expires and the size limit
	o      applyOptions
}

// fail says why nothing was applied.
func (a *applier) fail(format string, args ...any) ([]redirect, bool) {
	fmt.Fprintf(a.env.Stderr, "3gs check: not applied: "+format+"\n", args...)
	return nil, false
}

// apply writes the redirects into the registry file, each category one
// change through the store (store.File.ChangeCategory): an audit entry,
// the new version and the signature, taken back when the write fails.
// It returns the redirects applied.
func (a *applier) apply(results []linkcheck.Result) ([]redirect, bool) {
	env, path := a.env, a.path
	by, skipped := redirectsByCategory(results)
	for _, r := range skipped {
		fmt.Fprintf(env.Stderr, "3gs check: %s moved to %s, which was not checked (another host at an address a check does not follow, or too many redirects); not applied: check it and edit the URL by hand.\n", r.URL, r.Location)
	}
	if len(by) == 0 {
		fmt.Fprintln(a.stdout, "\nNo permanent redirect to apply.")
		return nil, true
	}
	// The registry is read under its lock, so nothing written meanwhile is
	// lost; a server holding the lock edits it itself.
	lock, err := filelock.TryLock(path)
	if err != nil {
		if errors.Is(err, filelock.ErrHeld) {
			return a.fail("%v.\nA 3gs server edits this registry: stop it and run 3gs check --apply-redirects again, or make the edits through its upsert_category tool.", err)
		}
		return a.fail("%v", err)
	}
	defer lock.Unlock()
	reg, ok := a.base()
	if !ok {
		return nil, false
	}
	file := a.file(env, "check", path, auditLogPath(a.o.auditLog, path))
	return a.each(file, reg, by)
}

// base is the registry as read under the lock, when its signature allows
// signing changes to it with a.key.
func (a *applier) base() (*registry.Registry, bool) {
	path := a.path
	srvd, ok := loadServed(a.env, "check", path, a.limit)
	if !ok {
		return nil, false
	}
	st := srvd.Sig
	_, named := srvd.Reg.CuratorKey()
	switch {
	case st.Signed() && !st.Verified:
		_, ok = a.fail("%s%s does not verify (%v), so %s changed since it was signed; signing the redirects would sign those changes too.\nCheck it with 3gs verify %s; if the changes are yours, sign them with 3gs sign --key-file KEY %s, then run this again.",
			path, signature.Suffix, st.Problem, path, signature.ShellQuote(path), signature.ShellQuote(path))
		return nil, ok
	case named && !st.Signed():
		_, ok = a.fail("%s names the curator key %s but has no signature; sign it first: 3gs sign --key-file KEY %s", path, srvd.Reg.Curator().Pubkey, signature.ShellQuote(path))
		return nil, ok
	case named && a.key == nil:
		_, ok = a.fail("%s is signed by its curator, and the changes must be signed too: give the curator key with --key-file KEY (or %s).", path, secretKeyEnv)
		return nil, ok
	}
	if a.key != nil {
		if err := signature.CheckCurator(srvd.Reg, pkarr.Public(a.key)); err != nil {
			_, ok = a.fail("the key from %s (%s) cannot sign %s: its curator.pubkey is %s.\nPass the curator's own key with --key-file.", a.from, pkarr.URI(pkarr.Public(a.key)), path, srvd.Reg.Curator().Pubkey)
			return nil, ok
		}
	}
	return srvd.Reg, true
}

// each applies the redirects of each category in turn, by slug, as a
// change of its own, each to the registry the one before wrote.
func (a *applier) each(file store.File, reg *registry.Registry, by map[string][]redirect) ([]redirect, bool) {
	env, path := a.env, a.path
	slugs := make([]string, 0, len(by))
	for slug := range by {
		slugs = append(slugs, slug)
	}
	slices.Sort(slugs)
	var applied []redirect
	for _, slug := range slugs {
		if _, ok := reg.Category(slug); !ok {
			fmt.Fprintf(env.Stderr, "3gs check: category %s is no longer in %s; its redirects were not applied.\n", slug, path)
			continue
		}
		var moved []redirect
		changed, err := file.ChangeCategory(reg, gen.AuditEntryActionUpsert, slug, false, func(doc *gen.Registry) error {
			moved = moveSources(env, doc, slug, by[slug])
			if len(moved) == 0 {
				return errUnchanged
			}
			return nil
		})
		if errors.Is(err, errUnchanged) {
			continue
		}
		var le *store.LogError
		if errors.As(err, &le) {
			// The log is refused as sign refuses it, with its fix.
			logFailed(env, "check", path, file.LogPath, pkarr.Public(a.key), le.Err)
			return applied, false
		}
		if err != nil {
			if len(applied) > 0 {
				fmt.Fprintf(env.Stderr, "3gs check: the redirects of %s were applied, each category a signed change of its own; ", strings.Join(categoriesOf(applied, by), ", "))
			}
			fmt.Fprintf(env.Stderr, "3gs check: the redirects of %s were not applied: %v\n", slug, err)
			return applied, false
		}
		reg = changed.Next
		for _, r := range moved {
			fmt.Fprintf(a.stdout, "Applied: categories.%s: %s → %s\n", slug, r.from, r.to)
		}
		if a.key != nil {
			fmt.Fprintf(a.stdout, "  %s version %s, signed, recorded in the audit log %s\n", path, reg.Version(), file.LogPath)
		} else {
			fmt.Fprintf(a.stdout, "  %s version %s, unsigned\n", path, reg.Version())
		}
		applied = append(applied, moved...)
	}
	return applied, true
}

// moveSources points the sources of category slug in doc that the
// redirects name to where they moved, and returns the redirects made.
func moveSources(env *Env, doc *gen.Registry, slug string, rs []redirect) []redirect {
	cat, ok := doc.Categories[slug]
	if !ok {
		return nil
	}
	// A copy: the document may share its slices with the registry read.
	cat.Sources = slices.Clone(cat.Sources)
	defer func() { doc.Categories[slug] = cat }()
	var moved []redirect
	for _, r := range rs {
		j := slices.IndexFunc(cat.Sources, func(s gen.Source) bool { return s.Rank == r.rank && s.URL == r.from })
		if j < 0 {
			fmt.Fprintf(env.Stderr, "3gs check: %s changed since it was checked; not applied.\n", r.from)
			continue
		}
		cat.Sources[j].URL = r.to
		moved = append(moved, r)
	}
	return moved
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
