package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/filelock"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
)

func endorseFlags(f *Flags) {
	f.String("registry", "REGISTRY_PATH", "", "registry file to edit when no PATH is given")
	f.String("pubkey", "THREEGS_ENDORSE_PUBKEY", "", "the endorsed curator's public key (pk:Z32 or Z32), as their 3gs init or 3gs keygen printed it")
	f.String("url", "THREEGS_ENDORSE_URL", "", "where their registry is: their node as http(s)://host[:port] (what 3gs serve --http publishes), or the registry file's own URL with its signature at URL.sig")
	f.String("name", "THREEGS_ENDORSE_NAME", "", "their display name; none keeps the name already listed for this key, if any")
	f.String("since", "THREEGS_ENDORSE_SINCE", "", "day you began vouching for them (YYYY-MM-DD); none keeps the day already listed for this key, or is today (UTC) for a new one")
	f.String("remove", "THREEGS_ENDORSE_REMOVE", "", "remove the endorsement of this public key instead of adding one")
	f.Bool("keep-version", "THREEGS_KEEP_VERSION", "leave \"version\" as it is instead of raising its patch number (1.2.3 to 1.2.4); peers refuse a changed registry under a version they already have")
	keyFlag(f, "the curator's secret key file, to re-sign the registry after the change; without it the registry must be signed again with 3gs sign")
	registryLimitFlag(f)
	f.String("expires", "THREEGS_EXPIRES", signature.DefaultValidity.String(), "with --key-file: how long the new signature vouches for the registry")
	auditLogFlag(f)
}

// runEndorse adds, replaces or removes one endorsement, then writes the
// registry back valid and, given the curator's key, signed.
func runEndorse(_ context.Context, env *Env, f *Flags) int {
	if len(f.Args()) == 0 && f.Value("registry") == "" {
		fmt.Fprintln(env.Stderr, "3gs endorse: name the registry file to edit, e.g. 3gs endorse --pubkey pk:... --url https://their.host registry.json (or --registry PATH, or REGISTRY_PATH)")
		return ExitUsage
	}
	path, ok := onePath(env, "endorse", f)
	if !ok {
		return ExitUsage
	}
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(env.Stderr, "3gs endorse: "+format+"\n", args...)
		return code
	}
	rawURL, name, since := f.Value("url"), f.Value("name"), f.Value("since")
	remove := f.Value("remove") != ""
	keyText := f.Value("pubkey")
	if remove {
		if keyText != "" || rawURL != "" || name != "" || since != "" {
			return fail(ExitUsage, "--remove takes the key alone; drop --pubkey, --url, --name and --since (or their THREEGS_ENDORSE_* variables), or drop --remove to add or change an endorsement")
		}
		keyText = f.Value("remove")
	} else if keyText == "" || rawURL == "" {
		return fail(ExitUsage, "name the curator to endorse and where their registry is, e.g. 3gs endorse --pubkey pk:... --url https://their.host %s (or --remove pk:... to remove one)", signature.ShellQuote(path))
	}
	endorsed, err := pkarr.ParsePublicKey(keyText)
	if err != nil {
		flag := "--pubkey"
		if remove {
			flag = "--remove"
		}
		return fail(ExitUsage, "%s %v", flag, err)
	}
	pub := pkarr.URI(endorsed)
	if !remove {
		if _, _, err := peer.Locate(rawURL); err != nil {
			return fail(ExitUsage, "--url: %v", err)
		}
		if since != "" {
			if _, err := time.Parse(time.DateOnly, since); err != nil {
				return fail(ExitUsage, "--since must be a day written YYYY-MM-DD, such as %s; got %q", time.Now().UTC().Format(time.DateOnly), since)
			}
		}
	}
	key, from, err := signingKey(env, f, func(msg string) { fmt.Fprintln(env.Stderr, "3gs endorse: warning:", msg) })
	if err != nil {
		return fail(ExitUsage, "%v", err)
	}
	validity, err := validityFlag(f)
	if err != nil {
		return fail(ExitUsage, "%v", err)
	}
	limit, err := registryLimit(f)
	if err != nil {
		return fail(ExitUsage, "%v", err)
	}

	// The lock file is made beside the registry, so a missing registry is
	// reported first rather than leaving a stray lock behind.
	if _, err := os.Stat(path); err != nil {
		problem, fix := registryProblem(path, err, "")
		return fail(ExitFail, "not changed: %s\nFix: %s.", problem, fix)
	}
	lock, err := filelock.TryLock(path)
	if err != nil {
		if errors.Is(err, filelock.ErrHeld) {
			return fail(ExitFail, "not changed: %v.\nA 3gs server is serving this registry and holds its lock, so a change here could be overwritten by it. Stop that server, run this command again, then start the server.", err)
		}
		return fail(ExitFail, "not changed: %v", err)
	}
	defer lock.Unlock()
	// Read under the lock, so nothing written meanwhile is lost.
	reg, err := registry.LoadFileLimit(path, limit)
	if err != nil {
		problem, fix := registryProblem(path, err, "")
		return fail(ExitFail, "not changed: %s\nFix: %s.", problem, fix)
	}
	if own, ok := reg.CuratorKey(); ok && own.Equal(endorsed) {
		return fail(ExitFail, "%s is the curator key of %s itself (curator.pubkey); a registry does not endorse its own curator. Pass the key of the other curator, as their 3gs init or 3gs keygen printed it.", pub, path)
	}
	if key != nil {
		if err := signature.CheckCurator(reg, pkarr.Public(key)); err != nil {
			return fail(ExitFail, "not changed: the key from %s (%s) cannot sign %s: its curator.pubkey is %s.\nPass the curator's own key with --key-file, or leave the key out and sign later with 3gs sign.", from, pkarr.URI(pkarr.Public(key)), path, reg.Curator().Pubkey)
		}
		// Endorsements say whose registries to trust: re-signing a file
		// whose signature no longer verifies would bless whatever changed
		// it, an added endorsement among them.
		doc, err := signature.ReadLimited(path+signature.Suffix, signature.MaxSize, "signature file")
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(ExitFail, "not changed: %v", err)
		}
		if st := signature.Check(reg, doc); st.Signed() && !st.Verified {
			return fail(ExitFail, "not changed: %s%s does not verify (%v), so %s was changed since it was signed; re-signing it now would sign those changes too.\nCheck it with 3gs verify %s; if the changes are yours, sign them with 3gs sign --key-file KEY %s, then run this again.",
				path, signature.Suffix, st.Problem, path, signature.ShellQuote(path), signature.ShellQuote(path))
		}
	}

	// The change goes through the audit log like any other (internal/store):
	// its entry first, then the registry signed with the new head. Without
	// the key the registry is written alone, to be signed later.
	logPath := auditLogPath(f, path)
	var done string
	var at int
	errUnchanged := errors.New("unchanged")
	edit := func(doc *gen.Registry) error {
		at = slices.IndexFunc(doc.Endorsements, func(e gen.Endorsement) bool { return e.Pubkey == pub })
		switch {
		case remove && at < 0:
			listed := "it endorses no one"
			if len(doc.Endorsements) > 0 {
				keys := make([]string, len(doc.Endorsements))
				for i, e := range doc.Endorsements {
					keys[i] = e.Pubkey
				}
				listed = "it endorses " + strings.Join(keys, ", ")
			}
			return fmt.Errorf("%s does not endorse %s, so there is nothing to remove (%s). Check the key.", path, pub, listed)
		case remove:
			done = "Removed the endorsement of " + who(doc.Endorsements[at]) + "."
			doc.Endorsements = slices.Delete(doc.Endorsements, at, at+1)
			return nil
		}
		e := gen.Endorsement{Pubkey: pub, URL: rawURL, Since: since}
		if name != "" {
			e.Name = &name
		}
		if at >= 0 {
			// Fill what was not given from the entry it replaces: the day
			// you began vouching does not move because the URL did.
			old := doc.Endorsements[at]
			if e.Name == nil {
				e.Name = old.Name
			}
			if e.Since == "" {
				e.Since = old.Since
			}
			if sameEndorsement(old, e) {
				fmt.Fprintf(env.Stdout, "%s already endorses %s at %s since %s; nothing changed.\n", path, who(e), e.URL, e.Since)
				return errUnchanged
			}
			doc.Endorsements[at] = e
			done = fmt.Sprintf("Updated the endorsement of %s: at %s, since %s.", who(e), e.URL, e.Since)
			return nil
		}
		if e.Since == "" {
			e.Since = time.Now().UTC().Format(time.DateOnly)
		}
		at = len(doc.Endorsements)
		doc.Endorsements = append(doc.Endorsements, e)
		done = fmt.Sprintf("Endorsed %s at %s, since %s.", who(e), e.URL, e.Since)
		return nil
	}
	changed, err := signingFile(env, "endorse", path, logPath, key, validity, limit).Change(reg, gen.AuditEntryActionEndorse, flagBool(f, "keep-version"), edit)
	var (
		ie *store.InvalidError
		le *store.LogError
		ce *store.Error
	)
	switch {
	case errors.Is(err, errUnchanged):
		return ExitOK
	case errors.As(err, &ie):
		return fail(ExitFail, "not changed: with this change %s would not be a valid registry: %v\nFix the value named there and run the command again.", path, loadProblem(ie.Err))
	case errors.As(err, &le):
		logFailed(env, "endorse", path, logPath, pkarr.Public(key), le.Err)
		return ExitFail
	case errors.As(err, &ce) && ce.InLog && key != nil:
		return fail(ExitFail, "not changed: %v", ce.Err)
	case errors.As(err, &ce) && key != nil:
		return fail(ExitFail, "%s: %v", path, ce.Err)
	case errors.As(err, &ce):
		return fail(ExitFail, "cannot write %s: %v", path, ce.Err)
	case err != nil:
		return fail(ExitFail, "%v", err)
	}
	next, oldVersion, version := changed.Next, reg.Version(), changed.Next.Version()
	written := "wrote " + path
	if key != nil {
		written += " and re-signed it with " + from + " (" + path + signature.Suffix + "), recorded as seq " + strconv.Itoa(changed.Head.Seq) + " of the audit log " + logPath
	}
	if version != oldVersion {
		written += "; version " + oldVersion + " → " + version
	} else {
		written += "; version kept at " + oldVersion
	}
	fmt.Fprintln(env.Stdout, done)
	fmt.Fprintln(env.Stdout, capitalize(written)+".")

	if !remove {
		prefix := "endorsements[" + strconv.Itoa(at) + "]"
		for _, w := range registry.Warnings(next) {
			if strings.HasPrefix(w.Path, prefix) {
				fmt.Fprintf(env.Stderr, "warning: %s: %s\n", path, w)
			}
		}
	}
	if version == oldVersion {
		fmt.Fprintf(env.Stderr, "Note: the content changed but version %s did not (--keep-version); peers that already fetched %s refuse the changed registry until the version changes.\n", oldVersion, oldVersion)
	}
	if _, named := next.CuratorKey(); key == nil && named {
		why := path + signature.Suffix + " no longer matches it"
		if _, err := os.Stat(path + signature.Suffix); errors.Is(err, fs.ErrNotExist) {
			why = "it has no " + path + signature.Suffix
		}
		fmt.Fprintf(env.Stderr, "Not signed: %s, and 3gs serve refuses a registry that names a curator key until it is signed. Sign it with: 3gs sign --key-file KEY %s\n", why, signature.ShellQuote(path))
	}
	return ExitOK
}

// who names an endorsed curator in messages.
func who(e gen.Endorsement) string {
	if e.Name == nil {
		return e.Pubkey
	}
	return *e.Name + " (" + e.Pubkey + ")"
}

func sameEndorsement(a, b gen.Endorsement) bool {
	return a.Pubkey == b.Pubkey && a.URL == b.URL && a.Since == b.Since &&
		(a.Name == nil) == (b.Name == nil) && (a.Name == nil || *a.Name == *b.Name)
}
