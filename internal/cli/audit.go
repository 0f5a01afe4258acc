package cli

import (
	"time"

	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// The audit log (internal/auditlog) is written by a server's curator
// tools and by 3gs sign. These verbs read it the way a stranger would,
// from the files alone, and migrate a log of the old unsigned format.
// They never repair anything: what an interrupted write left is reported
// as a note, and removed by the next 3gs serve or 3gs sign, which hold
// the registry's lock.

// auditSubcommands are the verbs of `3gs audit`.
var auditSubcommands = []command{
	{"verify", "[REGISTRY]", "check every entry of the registry's audit log, and that the log ends at the head the registry's signature covers", auditVerifyFlags, runAuditVerify},
	{"log", "[REGISTRY]", "print the audit log's entries, checking each on the way; --since, --slug and --action pick some", auditLogFlags, runAuditLog},
	{"fetch", "[REGISTRY]", "restore a lost audit log from a copy another node or host publishes (a read replica's, a peer's, the .audit.jsonl beside a registry document), checked entry by entry against the head the registry's signature covers", auditFetchFlags, runAuditFetch},
	{"migrate", "[REGISTRY]", "replace an audit log of the old unsigned format with a signed one that records the old file's digest (kept as LOG.v1), and sign the registry again", auditMigrateFlags, runAuditMigrate},
}

// auditLogFlag declares --audit-log for the audit verbs.
func auditLogFlag(f *Flags, p *string) {
	f.StringVar(p, "audit-log", "THREEGS_AUDIT_LOG", "", "the registry's audit log; none means REGISTRY.audit.jsonl beside the registry file")
}

// auditReadOptions are the flags of audit verify and audit log.
type auditReadOptions struct {
	pubkey, auditLog string
	registryFile
	// audit log only
	since        intFlag
	slug, action string
	json         bool
}

func auditVerifyFlags(f *Flags) {
	o := options[auditReadOptions](f)
	f.StringVar(&o.pubkey, "pubkey", "THREEGS_PUBKEY", "", "the curator key you trust (pk:Z32 or Z32) to check the entries' signatures; without it the key named in the registry is used, which proves integrity but not identity")
	o.registryFile.flags(f, "registry file whose log to check when no REGISTRY is given (the embedded registry has no log)")
	auditLogFlag(f, &o.auditLog)
}

func auditLogFlags(f *Flags) {
	auditVerifyFlags(f)
	o := options[auditReadOptions](f)
	f.IntVar(&o.since, "since", "THREEGS_AUDIT_SINCE", "0", 0, "print only entries with a seq above this one (every entry is still checked)")
	f.StringVar(&o.slug, "slug", "THREEGS_AUDIT_SLUG", "", "print only entries that changed this category")
	f.StringVar(&o.action, "action", "THREEGS_AUDIT_ACTION", "", "print only entries of this action: "+strings.Join(gen.EnumAuditEntryAction(), ", "))
	f.BoolVar(&o.json, "json", "THREEGS_AUDIT_JSON", "print the entries' lines exactly as stored, one JSON object a line, instead of the readable form")
}

// auditMigrateOptions are audit migrate's flags.
type auditMigrateOptions struct {
	signedWrite
}

func auditMigrateFlags(f *Flags) {
	o := options[auditMigrateOptions](f)
	o.flags(f, "registry file whose log to migrate when no REGISTRY is given",
		"the curator's secret key file, which signs the new log and the registry",
		"how long the registry's new signature vouches for it, as for 3gs sign",
		"")
}

// auditLogPath is the log of the registry at regPath: flag (--audit-log),
// or REGISTRY.audit.jsonl, the file 3gs serve writes by default.
func auditLogPath(flag, regPath string) string {
	if p := flag; p != "" {
		return p
	}
	return regPath + ".audit.jsonl"
}

// migrateHint is the command that migrates the log at logPath of the
// registry at regPath, with --audit-log only when it is not the default.
func migrateHint(regPath, logPath string) string {
	q := signature.ShellQuote
	cmd := "3gs audit migrate --key-file KEY "
	if logPath != regPath+".audit.jsonl" {
		cmd += "--audit-log " + q(logPath) + " "
	}
	return cmd + q(regPath)
}

// ---- signing with the log: 3gs sign and 3gs audit migrate ----

// file is the registry at regPath, whose lock the caller holds, for cmd
// to change or sign with s (internal/store). Opening its audit log
// repairs what a crash can leave, as a starting server does, and says so
// on stderr: a torn last line, and entries after the
// head the registry's current signature covers (a change interrupted
// after its entry was written and before the registry was). Anything else
// wrong is refused (logFailed), naming the seq, since signing would make a
// broken log look vouched for.
func (s signer) file(env *Env, cmd, regPath, logPath string) store.File {
	return store.File{
		Path: regPath, LogPath: logPath, Key: s.key, Validity: s.validity, Limit: s.limit,
		Notes: func(n string) { fmt.Fprintf(env.Stderr, "3gs %s: %s.\n", cmd, n) },
	}
}

// logFailed says why cmd will not sign with the log at logPath (the Err
// of a *store.LogError).
func logFailed(env *Env, cmd, regPath, logPath string, pub ed25519.PublicKey, err error) {
	if errors.Is(err, auditlog.ErrRepair) {
		fmt.Fprintf(env.Stderr, "3gs %s: not signed: %v\n", cmd, err)
		return
	}
	refuseLog(env, cmd, regPath, logPath, pub, err)
}

// refuseLog says why a command that signs will not go on with the log at
// logPath, and what to do.
func refuseLog(env *Env, cmd, regPath, logPath string, pub ed25519.PublicKey, err error) {
	var p *auditlog.Problem
	q := signature.ShellQuote
	switch {
	case errors.Is(err, auditlog.ErrLegacy):
		fmt.Fprintf(env.Stderr, "3gs %s: not signed: the audit log %s is an %v.\nFix: %s keeps it as %s.v1 and starts a signed log that records its digest; then sign.\n",
			cmd, logPath, err, migrateHint(regPath, logPath), logPath)
	case errors.As(err, &p):
		fmt.Fprintf(env.Stderr, "3gs %s: not signed: the audit log %s does not verify at seq %d: %s.\n"+
			"Nothing was changed; 3gs audit verify %s shows it. Restore the log from a backup; or, to start a new log and lose its history, move both it and %s aside and sign again.\n",
			cmd, logPath, p.Seq, p.Reason, q(regPath), regPath+signature.Suffix)
		if old := previousSigner(regPath); old != "" && old != curatorkey.Encode(pub) {
			// Re-keying: entries signed by the old key can never verify
			// under the new one, and nothing in the log says which key
			// was the curator's when.
			fmt.Fprintf(env.Stderr, "The registry was last signed by %s, not by this key: if the curator key changed, the log is signed with the old one, and the new key starts a log of its own. Keep the old log elsewhere as the history under the old key, remove %s, and sign again.\n", old, logPath)
		}
	default:
		fmt.Fprintf(env.Stderr, "3gs %s: not signed: the audit log %s: %v.\nNothing was changed; 3gs audit verify %s says more.\n", cmd, logPath, err, q(regPath))
	}
}

// previousSigner is the key the registry's signature file names, or ""
// when there is none that parses.
func previousSigner(regPath string) string {
	doc, err := signature.ReadLimited(regPath+signature.Suffix, signature.MaxSize, "signature file")
	if err != nil {
		return ""
	}
	sig, err := signature.Parse(doc)
	if err != nil {
		return ""
	}
	return sig.Pubkey
}

// counted is n with its noun: "1 entry", "3 entries".
func counted(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural(n, one, many))
}

// ---- reading: audit verify and audit log ----

// logTarget is a registry and its log as the read-only audit verbs see
// them.
type logTarget struct {
	regPath, logPath string
	reg              *registry.Registry
	// key is what signed entries are checked under: --pubkey, or else the
	// curator key the registry names; nil when neither exists.
	key     ed25519.PublicKey
	trusted bool
	// covered is the head the registry's signature covers, when that
	// signature verifies; sigNote says why there is none to check against.
	covered *auditlog.Head
	sigNote string
}

// auditTarget reads the registry the read-only verbs name and its
// signature, changing nothing on disk. A problem is written to failOut
// (stdout for verify, whose answer is that line; stderr for log, whose
// stdout is the entries) and its exit code returned.
func auditTarget(env *Env, f *Flags, failOut io.Writer) (*logTarget, int) {
	o := options[auditReadOptions](f)
	t := &logTarget{}
	if z := o.pubkey; z != "" {
		k, err := curatorkey.ParsePublicKey(z)
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: --pubkey %v\n", f.name, err)
			return nil, ExitUsage
		}
		t.key, t.trusted = k, true
	}
	limit, ok := o.sizeLimit(f)
	if !ok {
		return nil, ExitUsage
	}
	args := f.Args()
	switch {
	case len(args) > 1:
		fmt.Fprintf(env.Stderr, "%s: one registry at a time, got %d arguments\n", f.name, len(args))
		return nil, ExitUsage
	case len(args) == 1:
		t.regPath = args[0]
	default:
		t.regPath = o.registry
	}
	if t.regPath == "" {
		fmt.Fprintf(env.Stderr, "%s: the embedded registry has no audit log; name a registry file, e.g. %s registry.json (or set --registry / REGISTRY_PATH)\n", f.name, f.name)
		return nil, ExitUsage
	}
	t.logPath = auditLogPath(o.auditLog, t.regPath)
	data, doc, pending, err := signature.ReadPair(t.regPath, limit)
	if err != nil {
		fmt.Fprintf(failOut, "FAIL: cannot read the registry or its signature: %v\n", err)
		return nil, ExitFail
	}
	if pending {
		fmt.Fprintf(env.Stderr, "Note: %s.\n", signature.FinishHint(t.regPath))
	}
	if t.reg, err = registry.Load(data); err != nil {
		fmt.Fprintf(failOut, "FAIL: %s is not a valid registry: %v\n", t.regPath, loadProblem(err))
		return nil, ExitFail
	}
	if !t.trusted {
		t.key, _ = t.reg.CuratorKey()
	}
	sigName := t.regPath + signature.Suffix
	if doc == nil {
		t.sigNote = "there is no " + sigName + ", so the log is checked alone, not against a head a signature covers"
		return t, ExitOK
	}
	var trusted ed25519.PublicKey
	if t.trusted {
		trusted = t.key
	}
	v, err := signature.Verify(data, doc, trusted)
	if err == nil {
		err = signature.CheckCurator(t.reg, v.Signer)
	}
	if err != nil {
		t.sigNote = fmt.Sprintf("%s does not verify the registry (%v), so the log is checked alone, not against the head it names; 3gs verify %s says more", sigName, err, signature.ShellQuote(t.regPath))
		return t, ExitOK
	}
	t.covered = v.Log
	return t, ExitOK
}

// check verifies the whole log, calling each with every entry that checks
// out, then relates it to the registry (auditlog.Match).
func (t *logTarget) check(each func(*gen.AuditEntry, []byte) error) (*auditlog.Report, *auditlog.Fit, error) {
	o := auditlog.Options{Key: t.key, Each: each}
	if t.covered != nil {
		o.Mark = t.covered.Seq
	}
	rep, err := auditlog.Read(t.logPath, o)
	if err != nil {
		return rep, nil, err
	}
	fit, err := auditlog.Match(rep, t.reg.SHA256(), t.covered)
	return rep, fit, err
}

// failLine is the FAIL line for a log that does not check out.
func (t *logTarget) failLine(err error) string {
	var p *auditlog.Problem
	switch {
	case errors.Is(err, auditlog.ErrLegacy):
		return fmt.Sprintf("FAIL: %s is an %v. Migrate it with: %s", t.logPath, err, migrateHint(t.regPath, t.logPath))
	case errors.As(err, &p):
		return fmt.Sprintf("FAIL: seq %d: %s", p.Seq, p.Reason)
	}
	return fmt.Sprintf("FAIL: the audit log %s: %v", t.logPath, err)
}

// notes says what a log that checks out holds besides its entries: what
// an interrupted write left, which is not a failure (nothing was changed
// that the log does not record) and which the next writer removes.
func (t *logTarget) notes(w io.Writer, rep *auditlog.Report, fit *auditlog.Fit) {
	if fit.Pending > 0 {
		// Without a covered head (an unsigned registry) the pending entry
		// follows the last one the registry records.
		after := "the last entry the registry records"
		if t.covered != nil {
			after = fmt.Sprintf("seq %d, the head the registry's signature covers", t.covered.Seq)
		}
		fmt.Fprintf(w, "Note: %s holds %s after %s: a change was interrupted after its entry was written and before the registry was, so the registry never took it. 3gs serve removes them when it starts (and 3gs sign before it signs).\n",
			t.logPath, counted(fit.Pending, "entry", "entries"), after)
	}
	if rep.Torn > 0 {
		fmt.Fprintf(w, "Note: the last line of %s is partial (%d bytes without a newline), left by a write cut short; it is not part of the log. 3gs serve removes it when it starts (and 3gs sign before it signs).\n", t.logPath, rep.Torn)
	}
	if t.sigNote != "" {
		fmt.Fprintf(w, "Note: %s.\n", t.sigNote)
	}
}

// runAuditVerify checks a registry's log and prints one line: OK with
// what it holds and how it relates to the registry, or FAIL naming the
// first entry that does not check out.
func runAuditVerify(_ context.Context, env *Env, f *Flags) int {
	t, code := auditTarget(env, f, env.Stdout)
	if t == nil {
		return code
	}
	rep, fit, err := t.check(nil)
	if err != nil {
		fmt.Fprintln(env.Stdout, t.failLine(err))
		return ExitFail
	}
	// The log is whole, but a registry that names its curator's key must
	// also come with a signature that verifies it and names the head;
	// otherwise nothing ties the log to the registry (a cut tail would
	// pass with the signature deleted).
	if _, named := t.reg.CuratorKey(); named && (t.sigNote != "" || rep.Signed() && t.covered == nil) {
		why := t.sigNote
		if why == "" {
			why = "its signature names no audit log head, though the log is signed: it is older than the log, or was made by a 3gs before logs were signed"
		}
		fmt.Fprintf(env.Stdout, "FAIL: the log is whole (%d entries, head %s), but %s is not tied to it: %s. The curator signs it with 3gs sign, which records it in the log\n", rep.Entries, rep.Head, t.regPath, why)
		return ExitFail
	}
	fmt.Fprintln(env.Stdout, t.okLine(rep, fit))
	t.notes(env.Stderr, rep, fit)
	if !t.trusted && t.key != nil && rep.Signed() {
		fmt.Fprintf(env.Stderr, "Note: the entries were checked against the key the registry names itself, which proves the log is intact but not who wrote it. To prove that, pass the curator key you trust: 3gs audit verify --pubkey %s ...\n", curatorkey.Encode(t.key))
	}
	return ExitOK
}

// okLine sums up a log that checked out.
func (t *logTarget) okLine(rep *auditlog.Report, fit *auditlog.Fit) string {
	v := t.reg.Version()
	if rep.Entries == 0 {
		return fmt.Sprintf("OK: 0 entries: %s is empty or missing, and the registry's signature covers no head of it; 3gs sign starts the log", t.logPath)
	}
	signed := "no entry signed"
	if rep.Signed() {
		signed = fmt.Sprintf("signed from seq %d", rep.FirstSigned)
	}
	var fits string
	switch {
	case t.covered != nil && fit.Pending == 0:
		fits = "registry version " + v + " matches the head"
	case t.covered != nil:
		fits = fmt.Sprintf("registry version %s matches seq %d, the head its signature covers", v, t.covered.Seq)
	case !fit.Unrecorded:
		fits = "registry version " + v + " matches the head, which no verified signature names"
	default:
		fits = "registry version " + v + " is not the one the head records: it was changed outside the log since, and 3gs sign records it"
	}
	return fmt.Sprintf("OK: %s, head %s, %s, %s", counted(rep.Entries, "entry", "entries"), rep.Head, signed, fits)
}

// runAuditLog prints the entries of a registry's log that the filters
// pick, checking every entry as it goes: an entry is printed only once it
// and all before it have checked out, so a tampered log prints up to the
// damage and then FAIL.
func runAuditLog(_ context.Context, env *Env, f *Flags) int {
	o := options[auditReadOptions](f)
	since, err := o.since.get()
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs audit log: %v\n", err)
		return ExitUsage
	}
	action := o.action
	if action != "" && !validAction(action) {
		fmt.Fprintf(env.Stderr, "3gs audit log: --action (THREEGS_AUDIT_ACTION) must be one of %s, got %q\n", strings.Join(gen.EnumAuditEntryAction(), ", "), action)
		return ExitUsage
	}
	slug, raw := o.slug, o.json
	t, code := auditTarget(env, f, env.Stderr)
	if t == nil {
		return code
	}
	each := func(e *gen.AuditEntry, line []byte) error {
		if e.Seq <= since || action != "" && string(e.Action) != action || slug != "" && (e.Slug == nil || *e.Slug != slug) {
			return nil
		}
		if raw {
			_, err := fmt.Fprintf(env.Stdout, "%s\n", line)
			return err
		}
		_, err := fmt.Fprintln(env.Stdout, entryLine(e))
		return err
	}
	rep, fit, err := t.check(each)
	if err != nil {
		fmt.Fprintln(env.Stderr, t.failLine(err))
		return ExitFail
	}
	t.notes(env.Stderr, rep, fit)
	return ExitOK
}

// validAction reports whether a is an action the audit entry schema
// allows.
func validAction(a string) bool {
	return slices.Contains(gen.EnumAuditEntryAction(), a)
}

// entryLine is the readable form of an entry: seq, time, action, slug,
// actor, version and the first 12 hex digits of the registry digest it
// produced, space-separated, with - for what it lacks. Every field is
// free of spaces, so the columns can be cut. What the change was, when
// the entry says (its detail: "endorse add KEY URL", "accept proposal
// ID: reason"), follows them, last, on the same line.
func entryLine(e *gen.AuditEntry) string {
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	slug := "-"
	if e.Slug != nil {
		slug = dash(*e.Slug)
	}
	// A log may have been fetched from another node (3gs audit fetch),
	// and its actor is free text.
	line := fmt.Sprintf("%d %s %s %s %s %s %.12s", e.Seq, e.Time.UTC().Format(time.RFC3339Nano), e.Action, slug, dash(e.Actor), dash(e.Version), e.After)
	if e.Detail != nil {
		line += " " + oneLine(*e.Detail)
	}
	return textnorm.Terminal(line)
}
