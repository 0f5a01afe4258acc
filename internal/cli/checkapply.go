package cli

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/linkcheck"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// applyOptions are check's flags for --apply-redirects: those of every
// command that re-signs a registry.
type applyOptions struct {
	on        bool
	crossSite bool
	key       keyOptions
	expires   durationFlag
	auditLog  string
}

func applyFlags(f *Flags, o *applyOptions) {
	f.BoolVar(&o.on, "apply-redirects", "THREEGS_CHECK_APPLY_REDIRECTS", "write each permanent redirect (301 or 308) within the same site whose new URL answered into the registry file, one audited, signed change per category (as upsert_category makes, the audit entry naming each redirect), raising the version; needs --key-file when the registry is signed")
	f.BoolVar(&o.crossSite, "apply-redirects-cross-site", "THREEGS_CHECK_APPLY_REDIRECTS_CROSS_SITE", "with --apply-redirects: apply permanent redirects to another site too (another host, or https to http); without it they are listed for you to check by hand")
	keyFlag(f, &o.key, "the curator's secret key file: it signs the health file written (REGISTRY.health.json.sig, which endorsing servers check before showing your sources' health) and, with --apply-redirects, each change")
	expiresFlag(f, &o.expires, "with --apply-redirects: how long the new signature vouches for the registry")
	auditLogFlag(f, &o.auditLog)
}

// redirect is one source to move: a permanent redirect (status) seen at
// a time.
type redirect struct {
	rank     int
	from, to string
	status   int
	seen     time.Time
}

// detail is the audit entry's words for rs: each redirect, its status and
// when the check saw it.
func detail(rs []redirect) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("redirect: %s → %s, %d seen at %s", r.from, r.to, r.status, r.seen.UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, "; ")
}

// advisable reports whether the move from one URL to another may be
// shown as an edit to make, or made: the new URL is one a check would
// fetch (http or https, at an address fetch.MayFollow allows from the
// old one), so no report ever advises a file: URL or a link-local one.
func advisable(from, to string) bool {
	f, err1 := url.Parse(from)
	t, err2 := url.Parse(to)
	return err1 == nil && err2 == nil && fetch.MayFollow(f, t)
}

// sameSite reports whether a move from one URL to another stays on the
// site: the same host (a "www." before it or not), and the same scheme
// and port, or http upgraded to https on the default ports. Anything
// else (another host, another port, https down to http) is another
// site, applied only with --apply-redirects-cross-site.
func sameSite(from, to string) bool {
	f, err1 := url.Parse(from)
	t, err2 := url.Parse(to)
	if err1 != nil || err2 != nil {
		return false
	}
	host := func(u *url.URL) string {
		return strings.TrimPrefix(strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), "www.")
	}
	if host(f) != host(t) {
		return false
	}
	if f.Scheme == t.Scheme {
		return fetch.Port(f) == fetch.Port(t)
	}
	return f.Scheme == "http" && t.Scheme == "https" && fetch.Port(f) == "80" && fetch.Port(t) == "443"
}

// skipped is a redirect not applied, and why.
type skipped struct {
	r   linkcheck.Result
	why string
}

// redirectsByCategory are the permanent redirects of results whose new
// URL answered and may be applied (within the site, unless crossSite),
// by category slug; skips are the others, with why.
func redirectsByCategory(results []linkcheck.Result, crossSite bool) (by map[string][]redirect, skips []skipped) {
	by = map[string][]redirect{}
	for _, r := range results {
		if r.Status != linkcheck.Redirected || r.Location == "" {
			continue
		}
		switch {
		case r.HTTPStatus != http.StatusMovedPermanently && r.HTTPStatus != http.StatusPermanentRedirect:
			skips = append(skips, skipped{r, "the move is not permanent (301 or 308)"})
		case !r.LocationAnswered:
			skips = append(skips, skipped{r, "the new URL was not checked (too many redirects)"})
		case !advisable(r.URL, r.Location):
			skips = append(skips, skipped{r, "the new URL is one a check refuses (another scheme, or an address that is not public)"})
		case !crossSite && !sameSite(r.URL, r.Location):
			skips = append(skips, skipped{r, "the new URL is on another site; check it, then edit the URL by hand or run again with --apply-redirects-cross-site"})
		default:
			by[r.Category] = append(by[r.Category], redirect{r.Rank, r.URL, r.Location, r.HTTPStatus, r.CheckedAt})
		}
	}
	return by, skips
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
	by, skips := redirectsByCategory(results, a.o.crossSite)
	for _, s := range skips {
		fmt.Fprintf(env.Stderr, "3gs check: %s moved to %s; not applied: %s.\n", s.r.URL, textnorm.Terminal(s.r.Location), s.why)
	}
	if len(by) == 0 {
		fmt.Fprintln(a.stdout, "\nNo permanent redirect to apply.")
		return nil, true
	}
	// The registry is read under its lock, so nothing written meanwhile is
	// lost; a server holding the lock edits it itself.
	lock, err := safefile.TryLock(path)
	if err != nil {
		if errors.Is(err, safefile.ErrHeld) {
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
		if err := signature.CheckCurator(srvd.Reg, curatorkey.Public(a.key)); err != nil {
			_, ok = a.fail("the key from %s (%s) cannot sign %s: its curator.pubkey is %s.\nPass the curator's own key with --key-file.", a.from, curatorkey.URI(curatorkey.Public(a.key)), path, srvd.Reg.Curator().Pubkey)
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
		moved := stillListed(env, reg, slug, by[slug])
		if len(moved) == 0 {
			continue
		}
		// The entry names each redirect: a registry change a source's
		// server asked for is told apart from the curator's own.
		file.Detail = detail(moved)
		changed, err := file.ChangeCategory(reg, gen.AuditActionUpsert, slug, false, func(doc *gen.Registry) error {
			moveSources(doc, slug, moved)
			return nil
		})
		var invalid *store.InvalidError
		if errors.As(err, &invalid) {
			// A new URL the registry refuses (its checks apply to every
			// URL, whoever chose it) is not applied; the other
			// categories still are.
			fmt.Fprintf(env.Stderr, "3gs check: the redirects of %s were not applied: the registry would not be valid with them: %v\n", slug, err)
			continue
		}
		var le *store.LogError
		if errors.As(err, &le) {
			// The log is refused as sign refuses it, with its fix.
			logFailed(env, "check", path, file.LogPath, curatorkey.Public(a.key), le.Err)
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
			fmt.Fprintf(a.stdout, "Applied: categories.%s: %s → %s\n", slug, r.from, textnorm.Terminal(r.to))
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

// stillListed are the redirects rs of category slug whose source reg
// still lists at that rank and URL; the others changed since the check.
func stillListed(env *Env, reg *registry.Registry, slug string, rs []redirect) []redirect {
	cat, ok := reg.Category(slug)
	if !ok {
		return nil
	}
	var out []redirect
	for _, r := range rs {
		if !slices.ContainsFunc(cat.Sources, func(s gen.Source) bool { return s.Rank == r.rank && s.URL == r.from }) {
			fmt.Fprintf(env.Stderr, "3gs check: %s changed since it was checked; not applied.\n", r.from)
			continue
		}
		out = append(out, r)
	}
	return out
}

// moveSources points the sources of category slug in doc that the
// redirects name (still listed, see stillListed) to where they moved.
func moveSources(doc *gen.Registry, slug string, rs []redirect) {
	cat := doc.Categories[slug]
	// A copy: the document may share its slices with the registry read.
	cat.Sources = slices.Clone(cat.Sources)
	for _, r := range rs {
		if j := slices.IndexFunc(cat.Sources, func(s gen.Source) bool { return s.Rank == r.rank && s.URL == r.from }); j >= 0 {
			cat.Sources[j].URL = r.to
		}
	}
	doc.Categories[slug] = cat
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
