package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
)

// runSign writes PATH.sig for the registry at PATH. It refuses to sign a
// registry that does not load or that names another curator key: such a
// signature could never verify. It records the registry in its audit log
// first, when the log does not already end at it, and the signature names
// the log's head, so a reader holding the registry can check the log ends
// where the curator says it does. The log must verify; what a crash left
// in it is repaired, as a starting server does.
func runSign(_ context.Context, env *Env, f *Flags) int {
	o := options[signOptions](f)
	path, ok := onePath(env, "sign", f.Args(), o.registry)
	if !ok {
		return ExitUsage
	}
	// The key is read first, so a bad key file is reported as such; none
	// is needed when a running server signs (below).
	s, err := o.signer(env, "sign")
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs sign: %v\n", err)
		return ExitUsage
	}
	reg, err := registry.LoadFileLimit(path, s.limit)
	if err != nil {
		problem, fix := registryProblem(path, err, "")
		fmt.Fprintf(env.Stderr, "3gs sign: not signed: %s\nFix: %s.\n", problem, fix)
		return ExitFail
	}
	lock, err := safefile.TryLock(path)
	if err != nil {
		return signThroughServer(env, path, err, s.key != nil || o.expires.text != signature.DefaultValidity.String())
	}
	defer lock.Unlock()
	if s.key == nil {
		fmt.Fprintf(env.Stderr, "3gs sign: no key: pass --key-file KEY (made by 3gs keygen) or set %s\n", secretKeyEnv)
		return ExitUsage
	}
	pub := curatorkey.Public(s.key)
	// The entry goes first and the signature after, as a server's change
	// does: a crash between them leaves an entry after the signed head,
	// which the next sign or serve removes, never a signed registry the
	// log does not record (see internal/store).
	logPath := auditLogPath(o.auditLog, path)
	signed, err := curation.NewFile(s.file(env, "sign", path, logPath)).Sign(reg)
	var we *curation.WrongKeyError
	if errors.As(err, &we) {
		fmt.Fprintf(env.Stderr, "3gs sign: refusing to sign %s with the key from %s (%s): the registry's curator.pubkey is %s.\n"+
			"Set \"pubkey\": %q in the registry's \"curator\" if this is now the curator's key, or sign with the key of %s.\n",
			path, s.from, curatorkey.URI(pub), we.Curator, curatorkey.URI(pub), we.Curator)
		return ExitFail
	}
	if err != nil {
		signFailed(env, path, logPath, reg, pub, err)
		return ExitFail
	}
	printSigned(env, path, logPath, pub, signed)
	return ExitOK
}

// signThroughServer asks the server that holds the registry's lock
// (locked, the error of taking it) to sign the curator's hand edit, as
// it holds the key; ignored says the key or --expires given here were.
func signThroughServer(env *Env, path string, locked error, ignored bool) int {
	// A server edits this registry: it holds the key, so it records
	// and signs the hand edit itself when asked (see internal/app/watch.go).
	if answered, ok, text := app.AskToSign(path); answered {
		if !ok {
			fmt.Fprintf(env.Stderr, "3gs sign: not signed: the 3gs server editing %s refused: %s\n", path, text)
			return ExitFail
		}
		fmt.Fprintf(env.Stdout, "The 3gs server editing %s recorded the edit in its audit log, signed it and serves it. %s\n", path, text)
		if ignored {
			fmt.Fprintln(env.Stderr, "Note: the server signed with its own curator key, for the span of the signature it served (the one its curator last chose); the --key-file and --expires given here were not used. To choose another span, stop the server, run 3gs sign --expires, and start it again.")
		}
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "3gs sign: not signed: %v.\nA 3gs server is editing this registry, and its local channel (%s) does not answer. Stop the server, run 3gs sign again, and start it.\n", locked, app.LocalSocket(path))
	return ExitFail
}

// signFailed says why store.File.Sign did not sign reg, and what was
// left as it was.
func signFailed(env *Env, path, logPath string, reg *registry.Registry, pub ed25519.PublicKey, err error) {
	var (
		le *store.LogError
		ve *store.VersionError
		ce *store.Error
	)
	switch {
	case errors.As(err, &le):
		logFailed(env, "sign", path, logPath, pub, le.Err)
	case errors.As(err, &ve) && ve.Err != nil:
		fmt.Fprintf(env.Stderr, "3gs sign: not signed: %s changed since the audit log recorded version %s, and raising its version failed: %v.\nSet \"version\": %q in %s and sign again.\n",
			path, ve.Last, ve.Err, registry.BumpPatch(ve.Last), path)
	case errors.As(err, &ve):
		fmt.Fprintf(env.Stderr, "3gs sign: not signed: %s is version %s, older than %s, which the audit log %s last recorded; replicas and peers refuse an older version than they hold.\nSet \"version\": %q in %s and sign again.\n",
			path, reg.Version(), ve.Last, logPath, registry.BumpPatch(ve.Last), path)
	case errors.As(err, &ce) && ce.InLog:
		fmt.Fprintf(env.Stderr, "3gs sign: not signed: %v\n", ce.Err)
	case errors.As(err, &ce):
		undone := "the audit log is as it was"
		if ce.Kept {
			// The registry was replaced and only the signature failed:
			// the entry records what is on disk.
			undone = "the registry file holds the new version, and the audit log records it; sign again once the problem is fixed"
		} else if ce.UndoErr != nil {
			undone = fmt.Sprintf("and the entry just added to the audit log %s could not be removed (%v); the next 3gs sign or 3gs serve removes it", logPath, ce.UndoErr)
		}
		fmt.Fprintf(env.Stderr, "3gs sign: cannot write %s: %v; %s\n", path+signature.Suffix, ce.Err, undone)
	default:
		fmt.Fprintf(env.Stderr, "3gs sign: not signed: %v\n", err)
	}
}

// printSigned says what 3gs sign did.
func printSigned(env *Env, path, logPath string, pub ed25519.PublicKey, signed *store.Signed) {
	old, reg, head, entries, exp, sigPath := signed.Old, signed.Reg, signed.Head, signed.Entries, signed.Expires, path+signature.Suffix
	if reg != old {
		fmt.Fprintf(env.Stdout, "Raised the version of %s from %s to %s: it changed since the audit log recorded %s, and replicas and peers refuse a version they hold with other content.\n",
			path, old.Version(), reg.Version(), old.Version())
	}
	fmt.Fprintf(env.Stdout, "Signed %s version %s (sha256 %s) as %s; wrote %s, valid until %s\n",
		path, reg.Version(), reg.SHA256(), curatorkey.Encode(pub), sigPath, exp.Format(time.RFC3339))
	if len(entries) > 0 {
		fmt.Fprintf(env.Stdout, "Audit log %s: recorded the registry as seq %d (%s); the signature covers the log up to it\n", logPath, head.Seq, entries[0].Action)
	} else {
		fmt.Fprintf(env.Stdout, "Audit log %s: already records this registry at seq %d, so nothing was added; the signature covers the log up to it, with a new expiry\n", logPath, head.Seq)
	}
}
