package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
)

// endorseOptions are endorse's flags.
type endorseOptions struct {
	pubkey, url, name, since, remove string
	keepVersion                      bool
	signedWrite
}

func endorseFlags(f *Flags) {
	o := options[endorseOptions](f)
	f.StringVar(&o.pubkey, "pubkey", "THREEGS_ENDORSE_PUBKEY", "", "the endorsed curator's public key (pk:Z32 or Z32), as their 3gs init or 3gs keygen printed it")
	f.StringVar(&o.url, "url", "THREEGS_ENDORSE_URL", "", "where their registry is: their node as http(s)://host[:port] (what 3gs serve --http publishes), or the registry file's own URL with its signature at URL.sig")
	f.StringVar(&o.name, "name", "THREEGS_ENDORSE_NAME", "", "their display name; none keeps the name already listed for this key, if any")
	f.StringVar(&o.since, "since", "THREEGS_ENDORSE_SINCE", "", "day you began vouching for them (YYYY-MM-DD); none keeps the day already listed for this key, or is today (UTC) for a new one")
	f.StringVar(&o.remove, "remove", "THREEGS_ENDORSE_REMOVE", "", "remove the endorsement of this public key instead of adding one")
	f.BoolVar(&o.keepVersion, "keep-version", "THREEGS_KEEP_VERSION", "leave \"version\" as it is instead of raising its patch number (1.2.3 to 1.2.4); peers refuse a changed registry under a version they already have")
	o.flags(f, "registry file to edit when no PATH is given",
		"the curator's secret key file, to re-sign the registry after the change; without it the registry must be signed again with 3gs sign",
		"with --key-file: how long the new signature vouches for the registry",
		"")
}

// endorsement is one endorse run, its flags checked.
type endorsement struct {
	env      *Env
	o        *endorseOptions
	path     string
	remove   bool
	endorsed ed25519.PublicKey
	pub      string // endorsed, as pk:…
	signer          // the key (and where it came from), validity and size limit
	done     string // what the edit did, for the first line
	at       int    // the endorsement's index
}

// fail says why, and is code.
func (e *endorsement) fail(code int, format string, args ...any) int {
	fmt.Fprintf(e.env.Stderr, "3gs endorse: "+format+"\n", args...)
	return code
}

// runEndorse adds, replaces or removes one endorsement, then writes the
// registry back valid and, given the curator's key, signed.
func runEndorse(_ context.Context, env *Env, f *Flags) int {
	o := options[endorseOptions](f)
	if len(f.Args()) == 0 && o.registry == "" {
		fmt.Fprintln(env.Stderr, "3gs endorse: name the registry file to edit, e.g. 3gs endorse --pubkey pk:... --url https://their.host registry.json (or --registry PATH, or REGISTRY_PATH)")
		return ExitUsage
	}
	path, ok := onePath(env, "endorse", f.Args(), o.registry)
	if !ok {
		return ExitUsage
	}
	e := &endorsement{env: env, o: o, path: path}
	if code := e.parse(); code != ExitOK {
		return code
	}
	w, ok := takeWriter(env, "endorse", path)
	if !ok {
		return ExitFail
	}
	defer w.release()
	if w.server {
		// The server holding the registry makes the change with the
		// same workflow (its endorse_curator tool), signed with its key.
		if o.keepVersion {
			fmt.Fprintln(env.Stderr, "Note: a running server raises the version with every change; --keep-version applies only when no server holds the registry.")
		}
		return w.callServer(env, "endorse", path, "endorse_curator", endorseArgs{Pubkey: e.pub, URL: o.url, Name: o.name, Since: o.since, Remove: e.remove}, e.key != nil)
	}
	// The registry is read under the lock, so nothing written meanwhile
	// is lost, and changed through the store like any other change
	// (curation.Node.Endorse): its entry first, then the registry signed
	// with the new head. Without the key it is written alone, to be
	// signed later.
	logPath := auditLogPath(o.auditLog, path)
	done, err := curation.NewFile(e.signer.file(env, "endorse", path, logPath)).Endorse(curation.Endorsement{
		Pubkey: e.pub, URL: o.url, Name: o.name, Since: o.since, Remove: e.remove, KeepVersion: o.keepVersion, Actor: app.LocalActor(),
	})
	if code, failed := e.changeFailed(err, logPath); failed {
		return code
	}
	e.report(done, logPath)
	return ExitOK
}

// endorseArgs are endorse_curator's arguments, as 3gs endorse sends them
// to the server holding the registry.
type endorseArgs struct {
	Pubkey string `json:"pubkey"`
	URL    string `json:"url,omitempty"`
	Name   string `json:"name,omitempty"`
	Since  string `json:"since,omitempty"`
	Remove bool   `json:"remove,omitempty"`
}

// parse checks the flags: the key to add or remove, the URL, the day,
// the curator key, --expires and --max-registry-bytes.
func (e *endorsement) parse() int {
	o := e.o
	rawURL, name, since := o.url, o.name, o.since
	e.remove = o.remove != ""
	keyText := o.pubkey
	if e.remove {
		if keyText != "" || rawURL != "" || name != "" || since != "" {
			return e.fail(ExitUsage, "--remove takes the key alone; drop --pubkey, --url, --name and --since (or their THREEGS_ENDORSE_* variables), or drop --remove to add or change an endorsement")
		}
		keyText = o.remove
	} else if keyText == "" || rawURL == "" {
		return e.fail(ExitUsage, "name the curator to endorse and where their registry is, e.g. 3gs endorse --pubkey pk:... --url https://their.host %s (or --remove pk:... to remove one)", signature.ShellQuote(e.path))
	}
	var err error
	if e.endorsed, err = curatorkey.ParsePublicKey(keyText); err != nil {
		flag := "--pubkey"
		if e.remove {
			flag = "--remove"
		}
		return e.fail(ExitUsage, "%s %v", flag, err)
	}
	e.pub = curatorkey.URI(e.endorsed)
	if !e.remove {
		if _, _, err := peer.Locate(rawURL); err != nil {
			return e.fail(ExitUsage, "--url: %v", err)
		}
		if since != "" {
			if _, err := time.Parse(time.DateOnly, since); err != nil {
				return e.fail(ExitUsage, "--since must be a day written YYYY-MM-DD, such as %s; got %q", time.Now().UTC().Format(time.DateOnly), since)
			}
		}
	}
	if e.signer, err = o.signer(e.env, "endorse"); err != nil {
		return e.fail(ExitUsage, "%v", err)
	}
	return ExitOK
}

// changeFailed reports a change that did not happen; done is false when
// it did (err nil).
func (e *endorsement) changeFailed(err error, logPath string) (code int, done bool) {
	var (
		ie  *store.InvalidError
		le  *store.LogError
		ce  *store.Error
		re  *curation.ReadError
		we  *curation.WrongKeyError
		ue  *curation.UnverifiedError
		own *curation.OwnCuratorError
		ne  *curation.NotEndorsedError
		un  *curation.UnchangedError
	)
	path := e.path
	switch {
	case err == nil:
		return ExitOK, false
	case errors.As(err, &un):
		x := un.Endorsement
		fmt.Fprintf(e.env.Stdout, "%s already endorses %s at %s since %s; nothing changed.\n", path, who(x), x.URL, x.Since)
		return ExitOK, true
	case errors.As(err, &re) && re.Path == path:
		problem, fix := registryProblem(path, re.Err, "")
		return e.fail(ExitFail, "not changed: %s\nFix: %s.", problem, fix), true
	case errors.As(err, &re):
		return e.fail(ExitFail, "not changed: %v", re.Err), true
	case errors.As(err, &own):
		return e.fail(ExitFail, "%s is the curator key of %s itself (curator.pubkey); a registry does not endorse its own curator. Pass the key of the other curator, as their 3gs init or 3gs keygen printed it.", e.pub, path), true
	case errors.As(err, &we):
		return e.fail(ExitFail, "not changed: the key from %s (%s) cannot sign %s: its curator.pubkey is %s.\nPass the curator's own key with --key-file, or leave the key out and sign later with 3gs sign.", e.from, curatorkey.URI(curatorkey.Public(e.key)), path, we.Curator), true
	case errors.As(err, &ue):
		return e.fail(ExitFail, "not changed: %s%s does not verify (%v), so %s was changed since it was signed; re-signing it now would sign those changes too.\nCheck it with 3gs verify %s; if the changes are yours, sign them with 3gs sign --key-file KEY %s, then run this again.",
			path, signature.Suffix, ue.Problem, path, signature.ShellQuote(path), signature.ShellQuote(path)), true
	case errors.As(err, &ne):
		listed := "it endorses no one"
		if len(ne.Listed) > 0 {
			listed = "it endorses " + strings.Join(ne.Listed, ", ")
		}
		return e.fail(ExitFail, "%s does not endorse %s, so there is nothing to remove (%s). Check the key.", path, e.pub, listed), true
	case errors.As(err, &ie):
		return e.fail(ExitFail, "not changed: with this change %s would not be a valid registry: %v\nFix the value named there and run the command again.", path, loadProblem(ie.Err)), true
	case errors.As(err, &le):
		logFailed(e.env, "endorse", path, logPath, curatorkey.Public(e.key), le.Err)
		return ExitFail, true
	case errors.As(err, &ce) && ce.InLog && e.key != nil:
		return e.fail(ExitFail, "not changed: %v", ce.Err), true
	case errors.As(err, &ce) && e.key != nil:
		return e.fail(ExitFail, "%s: %v", path, ce.Err), true
	case errors.As(err, &ce):
		return e.fail(ExitFail, "cannot write %s: %v", path, ce.Err), true
	}
	return e.fail(ExitFail, "%v", err), true
}

// report says what was written, the registry's warnings about the new
// endorsement, and what is left to do.
func (e *endorsement) report(done *curation.Endorsed, logPath string) {
	env, path, changed := e.env, e.path, done.Changed
	next, oldVersion, version := changed.New.Registry, changed.Old.Registry.Version(), changed.New.Registry.Version()
	x := done.Endorsement
	switch done.Kind {
	case curation.Removed:
		e.done = "Removed the endorsement of " + who(x) + "."
	case curation.Updated:
		e.done = fmt.Sprintf("Updated the endorsement of %s: at %s, since %s.", who(x), x.URL, x.Since)
	default:
		e.done = fmt.Sprintf("Endorsed %s at %s, since %s.", who(x), x.URL, x.Since)
	}
	e.at = done.At
	written := "wrote " + path
	if e.key != nil {
		written += " and re-signed it with " + e.from + " (" + path + signature.Suffix + "), recorded as seq " + strconv.Itoa(changed.Head.Seq) + " of the audit log " + logPath
	}
	if version != oldVersion {
		written += "; version " + oldVersion + " → " + version
	} else {
		written += "; version kept at " + oldVersion
	}
	fmt.Fprintln(env.Stdout, e.done)
	fmt.Fprintln(env.Stdout, capitalize(written)+".")
	if !e.remove {
		prefix := "endorsements[" + strconv.Itoa(e.at) + "]"
		for _, w := range registry.Warnings(next) {
			if strings.HasPrefix(w.Path, prefix) {
				fmt.Fprintf(env.Stderr, "warning: %s: %s\n", path, w)
			}
		}
	}
	if version == oldVersion {
		fmt.Fprintf(env.Stderr, "Note: the content changed but version %s did not (--keep-version); peers that already fetched %s refuse the changed registry until the version changes.\n", oldVersion, oldVersion)
	}
	if _, named := next.CuratorKey(); e.key == nil && named {
		why := path + signature.Suffix + " no longer matches it"
		if _, err := os.Stat(path + signature.Suffix); errors.Is(err, fs.ErrNotExist) {
			why = "it has no " + path + signature.Suffix
		}
		fmt.Fprintf(env.Stderr, "Not signed: %s, and 3gs serve refuses a registry that names a curator key until it is signed. Sign it with: 3gs sign --key-file KEY %s\n", why, signature.ShellQuote(path))
	}
}

// who names an endorsed curator in messages.
func who(e gen.Endorsement) string {
	if e.Name == nil {
		return e.Pubkey
	}
	return *e.Name + " (" + e.Pubkey + ")"
}
