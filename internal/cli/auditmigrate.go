package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
)

// ---- migrating: audit migrate ----

const migrateCmd = "audit migrate"

// runAuditMigrate replaces a log of the old unsigned format with a signed
// one. The old file cannot be proved unedited, so it is kept as it is,
// beside the new log as LOG.v1, and the new log's start entry records its
// digest: from then on, that file cannot change unnoticed.
func runAuditMigrate(_ context.Context, env *Env, f *Flags) int {
	const cmd = migrateCmd
	o := options[auditMigrateOptions](f)
	path, ok := onePath(env, cmd, f.Args(), o.registry)
	if !ok {
		return ExitUsage
	}
	s, err := o.signer(env, cmd)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs %s: %v\n", cmd, err)
		return ExitUsage
	}
	if s.key == nil {
		fmt.Fprintf(env.Stderr, "3gs %s: no key: pass --key-file KEY (the curator's, made by 3gs keygen) or set %s; it signs the new log and the registry\n", cmd, secretKeyEnv)
		return ExitUsage
	}
	reg, err := registry.LoadFileLimit(path, s.limit)
	if err != nil {
		problem, fix := registryProblem(path, err, "")
		fmt.Fprintf(env.Stderr, "3gs %s: not migrated: %s\nFix: %s.\n", cmd, problem, fix)
		return ExitFail
	}
	pub := curatorkey.Public(s.key)
	if err := signature.CheckCurator(reg, pub); err != nil {
		fmt.Fprintf(env.Stderr, "3gs %s: not migrated: the key from %s (%s) is not the registry's curator key, %s; the new log must be signed by the curator.\n", cmd, s.from, curatorkey.URI(pub), reg.Curator().Pubkey)
		return ExitFail
	}
	lock, err := safefile.TryLock(path)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs %s: not migrated: %v.\nA 3gs server is using this registry and its log; stop it first.\n", cmd, err)
		return ExitFail
	}
	defer lock.Unlock()
	logPath := auditLogPath(o.auditLog, path)
	digest, ok := legacyLog(env, path, logPath, pub)
	if !ok {
		return ExitFail
	}
	unvouched := unvouchedBy(path, s.limit, reg, pub)
	// A failure after the old log was moved aside puts it back, so the
	// registry is never left with neither.
	signed, err := curation.NewFile(s.file(env, cmd, path, logPath)).MigrateLog(reg, digest)
	if !migrated(env, logPath, err) {
		return ExitFail
	}
	fmt.Fprintf(env.Stdout, "Migrated %s: kept the old log as %s (sha256 %s) and started a signed log whose seq 1 records that digest and the registry.\n", logPath, logPath+".v1", digest)
	fmt.Fprintf(env.Stdout, "Signed %s version %s (sha256 %s) as %s; wrote %s, valid until %s, covering the audit log up to seq %d\n",
		path, reg.Version(), reg.SHA256(), curatorkey.Encode(pub), path+signature.Suffix, signed.Expires.Format(time.RFC3339), signed.Head.Seq)
	if unvouched != "" {
		fmt.Fprintf(env.Stderr, "Note: %s %s before; the new signature vouches for the registry as it is now, and the new log's start entry records it so. Check it holds what you meant to sign.\n", path, unvouched)
	}
	return ExitOK
}

// legacyLog checks that the log at logPath is of the old format, with no
// LOG.v1 in the way, and returns its digest; otherwise it says why
// nothing is migrated.
func legacyLog(env *Env, path, logPath string, pub ed25519.PublicKey) (string, bool) {
	const cmd = migrateCmd
	rep, err := auditlog.Read(logPath, auditlog.Options{Key: pub})
	var p *auditlog.Problem
	switch {
	case errors.Is(err, auditlog.ErrLegacy):
	case err == nil && rep.Entries == 0:
		fmt.Fprintf(env.Stderr, "3gs %s: nothing to migrate: %s is empty or missing. 3gs sign starts a signed log.\n", cmd, logPath)
		return "", false
	case err == nil:
		fmt.Fprintf(env.Stderr, "3gs %s: nothing to migrate: %s is already in the current format (%s, head %s). 3gs audit verify checks it.\n", cmd, logPath, counted(rep.Entries, "entry", "entries"), rep.Head)
		return "", false
	case errors.As(err, &p):
		fmt.Fprintf(env.Stderr, "3gs %s: not migrated: %s is in the current format, not the old one, and does not verify at seq %d: %s. 3gs audit verify %s shows it.\n", cmd, logPath, p.Seq, p.Reason, signature.ShellQuote(path))
		return "", false
	default:
		fmt.Fprintf(env.Stderr, "3gs %s: not migrated: the audit log %s: %v\n", cmd, logPath, err)
		return "", false
	}
	oldPath := logPath + ".v1"
	if _, err := os.Lstat(oldPath); !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(env.Stderr, "3gs %s: not migrated: %s already exists (an earlier migration?), and the old log would replace it. Move it aside first.\n", cmd, oldPath)
		return "", false
	}
	digest, err := fileSHA256(logPath)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs %s: not migrated: reading %s: %v\n", cmd, logPath, err)
		return "", false
	}
	return digest, true
}

// unvouchedBy says how the registry's signature failed to vouch for reg
// under pub before migrating, which signs the registry as it is, as 3gs
// sign would: the curator may have meant only to convert the log. "" when
// it vouched.
func unvouchedBy(path string, limit int64, reg *registry.Registry, pub ed25519.PublicKey) string {
	if _, doc, _, err := signature.ReadPair(path, limit); err == nil && doc == nil {
		return "had no signature"
	} else if err == nil {
		if _, err := signature.Verify(reg.Bytes(), doc, pub); err != nil {
			return fmt.Sprintf("had a signature that did not verify under the curator key (%v)", err)
		}
	}
	return ""
}

// migrated reports whether store.File.Migrate succeeded (err nil), and
// otherwise says where the old log is.
func migrated(env *Env, logPath string, err error) bool {
	const cmd = migrateCmd
	var me *store.MigrateError
	switch {
	case errors.As(err, &me) && !me.Moved:
		fmt.Fprintf(env.Stderr, "3gs %s: not migrated: %v\n", cmd, me.Err)
	case errors.As(err, &me) && me.RestoreErr != nil:
		fmt.Fprintf(env.Stderr, "3gs %s: not migrated: %v; and the old log could not be put back (%v): it is %s, rename it to %s\n", cmd, me.Err, me.RestoreErr, logPath+".v1", logPath)
	case err != nil:
		fmt.Fprintf(env.Stderr, "3gs %s: not migrated, the old log is back in place: %v\n", cmd, err)
	default:
		return true
	}
	return false
}

// fileSHA256 is the hex SHA-256 of the regular file at path.
func fileSHA256(path string) (string, error) {
	f, _, err := safefile.Open(path, auditlog.MaxSize, "audit log")
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, auditlog.MaxSize)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
