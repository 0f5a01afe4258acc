package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// 3gs audit fetch puts back an audit log lost where the registry is kept
// (a deployment that copied the registry and its signature without it, a
// deleted file) from a copy published elsewhere: a read replica keeps a
// verified mirror of its origin's log and serves it at /audit, a peer or
// a static host publishes one beside the registry. The copy is trusted
// for nothing: store.RestoreLog keeps it only when it is, entry by entry,
// the log the registry's own signature names the head of.

// auditFetchOptions are audit fetch's flags.
type auditFetchOptions struct {
	from, auditLog string
	registryFile
	timeout durationFlag
}

func auditFetchFlags(f *Flags) {
	o := options[auditFetchOptions](f)
	f.StringVar(&o.from, "from", "THREEGS_AUDIT_FROM", "", "where the log is published: a node (http(s)://host[:port], e.g. a read replica of this registry's node, whose /audit serves it) or a registry document's URL (the log is the .audit.jsonl beside it)")
	o.registryFile.flags(f, "registry file whose log to restore when no REGISTRY is given")
	auditLogFlag(f, &o.auditLog)
	f.DurationVar(&o.timeout, "timeout", "THREEGS_AUDIT_TIMEOUT", "2m", "how long reading the whole log may take")
}

// fetchTarget is what audit fetch restores: the registry, its log's path
// and the head the registry's signature covers.
type fetchTarget struct {
	regPath, logPath string
	head             auditlog.Head
}

// auditFetchTarget reads the flags and the registry's signature, and
// checks there is no log to overwrite, before anything is fetched. A
// problem is written to stderr and its exit code returned.
func auditFetchTarget(env *Env, f *Flags) (*fetchTarget, int) {
	o := options[auditFetchOptions](f)
	t := &fetchTarget{regPath: o.registry}
	switch args := f.Args(); {
	case len(args) > 1:
		fmt.Fprintf(env.Stderr, "%s: one registry at a time, got %d arguments\n", f.name, len(args))
		return nil, ExitUsage
	case len(args) == 1:
		t.regPath = args[0]
	}
	switch {
	case o.from == "":
		fmt.Fprintf(env.Stderr, "%s: --from (THREEGS_AUDIT_FROM) is required: the node or registry document URL that publishes the log, e.g. a read replica of this registry's node: %s --from https://replica.example --registry registry.json\n", f.name, f.name)
		return nil, ExitUsage
	case t.regPath == "":
		fmt.Fprintf(env.Stderr, "%s: name the registry file whose log to restore, e.g. %s --from URL registry.json (or set --registry / REGISTRY_PATH)\n", f.name, f.name)
		return nil, ExitUsage
	}
	if _, _, err := peer.LocateLog(o.from); err != nil {
		fmt.Fprintf(env.Stderr, "%s: --from: %v\n", f.name, err)
		return nil, ExitUsage
	}
	limit, ok := o.sizeLimit(f)
	if !ok {
		return nil, ExitUsage
	}
	t.logPath = auditLogPath(o.auditLog, t.regPath)
	q := signature.ShellQuote
	if _, err := os.Lstat(t.logPath); err == nil {
		fmt.Fprintf(env.Stderr, "%s: %s exists, and a log is restored only where there is none. Nothing was fetched.\nFix: 3gs audit verify %s says what is wrong with it; if it must go, move it aside (mv %s %s.broken) and run this again.\n",
			f.name, t.logPath, q(t.regPath), q(t.logPath), q(t.logPath))
		return nil, ExitFail
	}
	head, err := coveredHead(t.regPath, limit)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: nothing to check a copy against: %v. Nothing was fetched.\n", f.name, err)
		return nil, ExitFail
	}
	t.head = head
	return t, ExitOK
}

// coveredHead is the log head the signature of the registry at regPath
// covers, when that signature verifies under the curator key the registry
// names. store.RestoreLog checks it again before it writes.
func coveredHead(regPath string, limit int64) (auditlog.Head, error) {
	data, doc, err := signature.ReadSigned(regPath, limit)
	if err != nil {
		return auditlog.Head{}, err
	}
	reg, err := registry.Load(data)
	if err != nil {
		return auditlog.Head{}, fmt.Errorf("%s is not a valid registry: %v", regPath, loadProblem(err))
	}
	st := signature.Check(reg, doc)
	switch {
	case !st.Verified:
		return auditlog.Head{}, fmt.Errorf("the signature of %s does not verify (%v); restore the registry and its signature first (3gs verify %s says more)", regPath, st.Problem, signature.ShellQuote(regPath))
	case st.Log == nil:
		return auditlog.Head{}, fmt.Errorf("the signature of %s covers no audit log head; start a new log with %s", regPath, migrateHint(regPath, regPath+".audit.jsonl"))
	}
	return *st.Log, nil
}

// runAuditFetch restores a registry's lost audit log from the copy --from
// publishes, and says what it restored.
func runAuditFetch(ctx context.Context, env *Env, f *Flags) int {
	t, code := auditFetchTarget(env, f)
	if t == nil {
		return code
	}
	o := options[auditFetchOptions](f)
	timeout, err := o.timeout.get()
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", f.name, err)
		return ExitUsage
	}
	fetcher := peer.NewFetcher(auditlog.MaxSize, timeout).AsOperator(true) // --from is the operator's
	r, err := fetcher.ReadLog(ctx, o.from, t.head.Seq)
	if err != nil {
		fetchFailed(env, f.name, o.from, err, timeout)
		return ExitFail
	}
	head, err := store.RestoreLog(t.regPath, t.logPath, r)
	r.Close()
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		fmt.Fprintf(env.Stderr, "%s: %v\n", f.name, err)
		return ExitFail
	case copyRefused(err):
		fmt.Fprintf(env.Stderr, "%s: refused: %s does not serve this registry's log (another curator's, another registry's, or one rewritten): %s. Nothing was written.\nFix: name a node that serves this registry: a read replica of its node, or a peer that endorses it.\n", f.name, o.from, textnorm.Terminal(err.Error()))
		return ExitFail
	default:
		fetchFailed(env, f.name, o.from, err, timeout)
		return ExitFail
	}
	q := signature.ShellQuote
	fmt.Fprintf(env.Stdout, "Restored %s: %s, head %s, the head the signature of %s covers; every entry checked out.\nNext: 3gs audit verify %s, then start 3gs serve again.\n",
		t.logPath, counted(head.Seq, "entry", "entries"), head, t.regPath, q(t.regPath))
	return ExitOK
}

// copyRefused reports whether RestoreLog refused the copy for what it
// holds, rather than for failing to read it.
func copyRefused(err error) bool {
	var p *auditlog.Problem
	return errors.As(err, &p) || errors.Is(err, auditlog.ErrLegacy) || errors.Is(err, auditlog.ErrMissing)
}

// fetchFailed says why the log at from could not be read within timeout:
// the coarse reason first, then the detail, which may quote what the node
// sent.
func fetchFailed(env *Env, name, from string, err error, timeout time.Duration) {
	more := ""
	if te := (*peer.TimeoutError)(nil); errors.As(err, &te) {
		more = fmt.Sprintf("; or, for a long log on a slow link, allow more than %s with --timeout (THREEGS_AUDIT_TIMEOUT)", timeout)
	}
	fmt.Fprintf(env.Stderr, "%s: the log at %s could not be read (%s): %s. Nothing was written.\nFix: check that %s answers (a node's /audit, or the .audit.jsonl beside a registry document), or name another node that publishes this registry's log%s.\n",
		name, from, peer.PublicReason(err), textnorm.Terminal(err.Error()), from, more)
}
