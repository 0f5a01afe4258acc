package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/filelock"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// secretKeyEnv holds a curator key as a 64-hex-character seed, the way
// PKARR tools pass one; it is an alternative to --key-file.
const secretKeyEnv = "PKARR_SECRET_KEY"

func keygenFlags(f *Flags) {
	f.String("out", "THREEGS_KEY_FILE", "", "where to write the new secret key (required; the file must not exist yet)")
}

// runKeygen creates a curator key. The public key goes to stdout alone, so
// scripts can capture it; the advice goes to stderr.
func runKeygen(_ context.Context, env *Env, f *Flags) int {
	out := f.Value("out")
	if out == "" || len(f.Args()) > 0 {
		fmt.Fprintln(env.Stderr, "3gs keygen: name the key file to create with --out PATH (or THREEGS_KEY_FILE), e.g. 3gs keygen --out ~/.config/3gs/curator.key")
		return ExitUsage
	}
	key, err := pkarr.Generate()
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs keygen: cannot read random bytes: %v\n", err)
		return ExitFail
	}
	// ~/.config/3gs may not exist yet: make the folders, private to the
	// user as the key is (0700; existing folders are left as they are).
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		fmt.Fprintf(env.Stderr, "3gs keygen: cannot create the folder for %s: %v\n", out, err)
		return ExitFail
	}
	if err := pkarr.WriteKeyFile(out, key); err != nil {
		fmt.Fprintf(env.Stderr, "3gs keygen: %v\n", err)
		return ExitFail
	}
	pub := pkarr.URI(pkarr.Public(key))
	fmt.Fprintln(env.Stdout, pub)
	fmt.Fprintf(env.Stderr, "Wrote the secret key to %s (mode 0600). Keep it private and backed up: whoever holds it can sign as you, and without it you cannot sign again under this key.\n"+
		"Next: set \"pubkey\": %q in your registry's \"curator\", then run: 3gs sign --key-file %s REGISTRY\n", out, pub, signature.ShellQuote(out))
	return ExitOK
}

// keyFlag declares --key-file; PKARR_SECRET_KEY is the other way to pass a key.
func keyFlag(f *Flags, usage string) {
	f.String("key-file", "THREEGS_KEY_FILE", "", usage+"; instead of a file, "+secretKeyEnv+" may hold the key as 64 hex characters")
	f.Bool("allow-exposed-key", "THREEGS_ALLOW_EXPOSED_KEY", "use a --key-file that other users may read (mode wider than 0600) instead of refusing it; a warning is still logged")
}

// exposedKeyError refuses a key file others may read. It keeps the key, so
// doctor can go on to check it.
type exposedKeyError struct {
	path string
	mode fs.FileMode
	key  ed25519.PrivateKey
}

func (e *exposedKeyError) Error() string {
	return fmt.Sprintf("--key-file %s has mode %04o, so other users may read the curator's secret key; run: chmod 600 %s (or pass --allow-exposed-key to use it anyway)", e.path, e.mode, signature.ShellQuote(e.path))
}

// signingKey returns the key from --key-file or PKARR_SECRET_KEY, nil when
// neither is set, and says where it came from. Both at once is an error:
// which one wins would be a guess.
func signingKey(env *Env, f *Flags, log func(msg string)) (ed25519.PrivateKey, string, error) {
	path, hexSeed := f.Value("key-file"), env.Getenv(secretKeyEnv)
	switch {
	case path != "" && hexSeed != "":
		return nil, "", fmt.Errorf("both --key-file (THREEGS_KEY_FILE) and %s are set; keep one", secretKeyEnv)
	case path != "":
		kf, err := pkarr.ReadKeyFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("--key-file: %w", err)
		}
		if kf.Exposed {
			if !flagBool(f, "allow-exposed-key") {
				return nil, "", &exposedKeyError{path: path, mode: kf.Mode, key: kf.Key}
			}
			if log != nil {
				log(fmt.Sprintf("key file %s has mode %04o, so other users may read the secret key (--allow-exposed-key); run: chmod 600 %s", path, kf.Mode, signature.ShellQuote(path)))
			}
		}
		return kf.Key, "--key-file " + path, nil
	case hexSeed != "":
		key, err := pkarr.ParseSeed(hexSeed)
		if err != nil {
			return nil, "", fmt.Errorf("%s %w", secretKeyEnv, err)
		}
		return key, secretKeyEnv, nil
	}
	return nil, "", nil
}

func signFlags(f *Flags) {
	keyFlag(f, "the curator's secret key file, as written by 3gs keygen")
	f.String("registry", "REGISTRY_PATH", "", "registry file to sign when no PATH is given")
	registryLimitFlag(f)
	f.String("expires", "THREEGS_EXPIRES", signature.DefaultValidity.String(), "how long the signature vouches for the registry; readers refuse it after that, so sign again before then")
	f.String("audit-log", "THREEGS_AUDIT_LOG", "", "the registry's audit log, which records the signed registry and whose head the signature names; none means REGISTRY.audit.jsonl")
}

// minValidity and maxValidity bound --expires: a signature must outlive
// the refresh of whoever reads it, and one that lasts for years is no
// defence against a frozen copy.
const (
	minValidity = time.Hour
	maxValidity = 5 * 366 * 24 * time.Hour
)

// validityFlag reads --expires.
func validityFlag(f *Flags) (time.Duration, error) {
	d, err := f.Duration("expires")
	if err != nil {
		return 0, err
	}
	if d < minValidity || d > maxValidity {
		return 0, fmt.Errorf("--expires (THREEGS_EXPIRES) is %v; give a duration from %v to %v (e.g. 720h for 30 days)", d, minValidity, maxValidity)
	}
	return d, nil
}

// runSign writes PATH.sig for the registry at PATH. It refuses to sign a
// registry that does not load or that names another curator key: such a
// signature could never verify. It records the registry in its audit log
// first, when the log does not already end at it, and the signature names
// the log's head, so a reader holding the registry can check the log ends
// where the curator says it does. The log must verify; what a crash left
// in it is repaired, as a starting server does.
func runSign(_ context.Context, env *Env, f *Flags) int {
	path, ok := onePath(env, "sign", f)
	if !ok {
		return ExitUsage
	}
	validity, err := validityFlag(f)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs sign: %v\n", err)
		return ExitUsage
	}
	limit, err := registryLimit(f)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs sign: %v\n", err)
		return ExitUsage
	}
	// The key is read first, so a bad key file is reported as such; none
	// is needed when a running server signs (below).
	key, from, err := signingKey(env, f, func(msg string) { fmt.Fprintln(env.Stderr, "3gs sign: warning:", msg) })
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs sign: %v\n", err)
		return ExitUsage
	}
	reg, err := registry.LoadFileLimit(path, limit)
	if err != nil {
		problem, fix := registryProblem(path, err, "")
		fmt.Fprintf(env.Stderr, "3gs sign: not signed: %s\nFix: %s.\n", problem, fix)
		return ExitFail
	}
	lock, err := filelock.TryLock(path)
	if err != nil {
		// A server edits this registry: it holds the key, so it records
		// and signs the hand edit itself when asked (see watch.go).
		if answered, ok, text := askServerToSign(path); answered {
			if !ok {
				fmt.Fprintf(env.Stderr, "3gs sign: not signed: the 3gs server editing %s refused: %s\n", path, text)
				return ExitFail
			}
			fmt.Fprintf(env.Stdout, "The 3gs server editing %s recorded the edit in its audit log, signed it and serves it. %s\n", path, text)
			if key != nil || f.Value("expires") != signature.DefaultValidity.String() {
				fmt.Fprintln(env.Stderr, "Note: the server signed with its own curator key and --expires; the --key-file and --expires given here were not used.")
			}
			return ExitOK
		}
		fmt.Fprintf(env.Stderr, "3gs sign: not signed: %v.\nA 3gs server is editing this registry, and its local sign channel (%s) does not answer. Stop the server, run 3gs sign again, and start it.\n", err, signSocket(path))
		return ExitFail
	}
	defer lock.Unlock()
	if key == nil {
		fmt.Fprintf(env.Stderr, "3gs sign: no key: pass --key-file KEY (made by 3gs keygen) or set %s\n", secretKeyEnv)
		return ExitUsage
	}
	pub := pkarr.Public(key)
	if err := signature.CheckCurator(reg, pub); err != nil {
		fmt.Fprintf(env.Stderr, "3gs sign: refusing to sign %s with the key from %s (%s): the registry's curator.pubkey is %s.\n"+
			"Set \"pubkey\": %q in the registry's \"curator\" if this is now the curator's key, or sign with the key of %s.\n",
			path, from, pkarr.URI(pub), reg.Curator().Pubkey, pkarr.URI(pub), reg.Curator().Pubkey)
		return ExitFail
	}
	// The entry goes first and the signature after, as a server's change
	// does: a crash between them leaves an entry after the signed head,
	// which the next sign or serve removes, never a signed registry the
	// log does not record (see internal/store).
	logPath := auditLogPath(f, path)
	sf := signingFile(env, "sign", path, logPath, key, validity, limit)
	signed, err := sf.Sign(reg)
	var (
		le *store.LogError
		ve *store.VersionError
		ce *store.Error
	)
	switch {
	case errors.As(err, &le):
		logFailed(env, "sign", path, logPath, pub, le.Err)
		return ExitFail
	case errors.As(err, &ve) && ve.Err != nil:
		fmt.Fprintf(env.Stderr, "3gs sign: not signed: %s changed since the audit log recorded version %s, and raising its version failed: %v.\nSet \"version\": %q in %s and sign again.\n",
			path, ve.Last, ve.Err, registry.BumpPatch(ve.Last), path)
		return ExitFail
	case errors.As(err, &ve):
		fmt.Fprintf(env.Stderr, "3gs sign: not signed: %s is version %s, older than %s, which the audit log %s last recorded; replicas and peers refuse an older version than they hold.\nSet \"version\": %q in %s and sign again.\n",
			path, reg.Version(), ve.Last, logPath, registry.BumpPatch(ve.Last), path)
		return ExitFail
	case errors.As(err, &ce) && ce.InLog:
		fmt.Fprintf(env.Stderr, "3gs sign: not signed: %v\n", ce.Err)
		return ExitFail
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
		return ExitFail
	case err != nil:
		fmt.Fprintf(env.Stderr, "3gs sign: not signed: %v\n", err)
		return ExitFail
	}
	old, reg, head, entries, exp, sigPath := signed.Old, signed.Reg, signed.Head, signed.Entries, signed.Expires, path+signature.Suffix
	if reg != old {
		fmt.Fprintf(env.Stdout, "Raised the version of %s from %s to %s: it changed since the audit log recorded %s, and replicas and peers refuse a version they hold with other content.\n",
			path, old.Version(), reg.Version(), old.Version())
	}
	fmt.Fprintf(env.Stdout, "Signed %s version %s (sha256 %s) as %s; wrote %s, valid until %s\n",
		path, reg.Version(), reg.SHA256(), pkarr.Encode(pub), sigPath, exp.Format(time.RFC3339))
	if len(entries) > 0 {
		fmt.Fprintf(env.Stdout, "Audit log %s: recorded the registry as seq %d (%s); the signature covers the log up to it\n", logPath, head.Seq, entries[0].Action)
	} else {
		fmt.Fprintf(env.Stdout, "Audit log %s: already records this registry at seq %d, so nothing was added; the signature covers the log up to it, with a new expiry\n", logPath, head.Seq)
	}
	return ExitOK
}

// onePath is the registry file a command works on: its one argument, or
// --registry / REGISTRY_PATH.
func onePath(env *Env, cmd string, f *Flags) (string, bool) {
	args := f.Args()
	switch {
	case len(args) == 1:
		return args[0], true
	case len(args) == 0 && f.Value("registry") != "":
		return f.Value("registry"), true
	case len(args) == 0:
		fmt.Fprintf(env.Stderr, "3gs %s: name the registry file, e.g. 3gs %s --key-file KEY registry.json\n", cmd, cmd)
	default:
		fmt.Fprintf(env.Stderr, "3gs %s: one registry file at a time, got %d arguments\n", cmd, len(args))
	}
	return "", false
}

func verifyFlags(f *Flags) {
	f.String("pubkey", "THREEGS_PUBKEY", "", "the curator key you trust (pk:Z32 or Z32); without it the key named in the registry is used, which proves integrity but not identity")
	f.String("registry", "REGISTRY_PATH", "", "registry file to verify when no PATH is given; none means the embedded registry.json")
	registryLimitFlag(f)
	f.Bool("signature-only", "THREEGS_VERIFY_SIGNATURE_ONLY", "check the signature alone, not the audit log beside the registry that serve also needs: for a copy you read but will not serve, such as one downloaded from a node's /registry")
}

// runVerify checks a registry against its signature file and prints one
// line: OK with the signer, curator and expiry, or FAIL with the first
// thing wrong, an expired signature among them (but for the embedded
// registry, whose freshness is the binary's).
func runVerify(_ context.Context, env *Env, f *Flags) int {
	var trusted ed25519.PublicKey
	if z := f.Value("pubkey"); z != "" {
		k, err := pkarr.ParsePublicKey(z)
		if err != nil {
			fmt.Fprintf(env.Stderr, "3gs verify: --pubkey %v\n", err)
			return ExitUsage
		}
		trusted = k
	}
	limit, err := registryLimit(f)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs verify: %v\n", err)
		return ExitUsage
	}
	args := f.Args()
	if len(args) > 2 {
		fmt.Fprintf(env.Stderr, "3gs verify: expected REGISTRY [SIGNATURE], got %d arguments\n", len(args))
		return ExitUsage
	}
	if len(args) == 0 && f.Value("registry") != "" {
		args = []string{f.Value("registry")}
	}
	var data, doc []byte
	var regName, sigName string
	switch len(args) {
	case 0:
		data, doc = threegs.DefaultRegistry, threegs.DefaultSignature
		regName, sigName = "embedded registry.json", "embedded registry.json.sig"
	default:
		regName, sigName = args[0], args[0]+signature.Suffix
		if len(args) == 2 {
			sigName = args[1]
		}
		var err error
		var pending bool
		if len(args) == 1 {
			// The pair as a reader should see it: after an interrupted
			// signed write, the new registry with its pending signature.
			if data, doc, pending, err = signature.ReadPair(regName, limit); err != nil {
				fmt.Fprintf(env.Stdout, "FAIL: cannot read the registry or its signature: %v\n", err)
				return ExitFail
			}
			if pending {
				fmt.Fprintf(env.Stderr, "Note: %s.\n", signature.FinishHint(regName))
			}
			if doc == nil {
				err = fs.ErrNotExist
			}
		} else if data, err = signature.ReadLimited(regName, limit, "registry"); err != nil {
			fmt.Fprintf(env.Stdout, "FAIL: cannot read the registry: %v\n", err)
			return ExitFail
		} else {
			doc, err = signature.ReadLimited(sigName, signature.MaxSize, "signature file")
		}
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(env.Stdout, "FAIL: %s is not signed: there is no %s. Its curator signs it with: 3gs sign --key-file KEY %s\n", regName, sigName, signature.ShellQuote(regName))
			return ExitFail
		} else if err != nil {
			fmt.Fprintf(env.Stdout, "FAIL: cannot read the signature: %v\n", err)
			return ExitFail
		}
	}
	v, err := signature.Verify(data, doc, trusted)
	if err != nil {
		fmt.Fprintf(env.Stdout, "FAIL: %s does not verify against %s: %v\n", regName, sigName, err)
		return ExitFail
	}
	reg, err := registry.Load(data)
	if err != nil {
		fmt.Fprintf(env.Stdout, "FAIL: the signature is valid, but %s is not a valid registry: %v\n", regName, loadProblem(err))
		return ExitFail
	}
	if err := signature.CheckCurator(reg, v.Signer); err != nil {
		fmt.Fprintf(env.Stdout, "FAIL: %s: %v\n", regName, err)
		return ExitFail
	}
	// The embedded registry's freshness is the binary's
	// (docs/provenance.md); a file's signature must still be in force.
	if exp := v.Expires; len(args) > 0 && signature.Expired(exp, time.Now()) {
		fmt.Fprintf(env.Stdout, "FAIL: %s is signed by %s (curator %s), but the signature expired at %s: servers, peers and replicas refuse it, since an old signed copy put back looks exactly like this. Its curator signs it again: 3gs sign --key-file KEY %s\n",
			regName, pkarr.Encode(v.Signer), reg.Curator().Name, exp.UTC().Format(time.RFC3339), signature.ShellQuote(regName))
		return ExitFail
	}
	// serve also needs the audit log the signature names, beside the file:
	// a registry copied without it verifies, but no server starts on it.
	if v.Log != nil && len(args) == 1 && !flagBool(f, "signature-only") {
		logPath := regName + ".audit.jsonl"
		rep, err := auditlog.Read(logPath, auditlog.Options{Key: v.Signer, Mark: v.Log.Seq})
		if err == nil {
			_, err = auditlog.Match(rep, reg.SHA256(), v.Log)
		}
		switch {
		case errors.Is(err, auditlog.ErrMissing):
			fmt.Fprintf(env.Stdout, "FAIL: %s is signed by %s (curator %s), but its %s; serve refuses it. To fix: %s. (To check the signature alone, of a copy you will not serve: --signature-only.)\n",
				regName, pkarr.Encode(v.Signer), reg.Curator().Name, strings.TrimPrefix(err.Error(), "the registry's "), auditlog.MissingFix(logPath, regName))
			return ExitFail
		case err != nil:
			fmt.Fprintf(env.Stdout, "FAIL: %s is signed by %s (curator %s), but its audit log %s does not verify: %v; serve refuses it. 3gs audit verify %s shows the whole log.\n",
				regName, pkarr.Encode(v.Signer), reg.Curator().Name, logPath, err, signature.ShellQuote(regName))
			return ExitFail
		}
	}
	until := ""
	if !v.Expires.IsZero() {
		until = ", in force until " + v.Expires.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(env.Stdout, "OK: signed by %s (curator %s)%s\n", pkarr.Encode(v.Signer), reg.Curator().Name, until)
	if trusted == nil {
		fmt.Fprintf(env.Stderr, "Note: checked against the key the files name themselves. To prove who signed, pass the curator key you trust: 3gs verify --pubkey %s ...\n", pkarr.Encode(v.Signer))
	}
	return ExitOK
}

// loadProblem shortens a registry load error to its first problem.
func loadProblem(err error) error {
	var errs strictjson.Errors
	if errors.As(err, &errs) && len(errs) > 1 {
		return fmt.Errorf("%v (and %d more problems)", errs[0], len(errs)-1)
	}
	return err
}

// registryProblem says why the registry file at path did not load, and how
// to fix it. Only a file that was read but breaks the schema or the rules
// is one for 3gs validate; a missing or unreadable file is fixed where it
// lies, and validate could not read it either. omit, for commands that
// take --registry, is what leaving it out does, such as "serve the
// embedded registry".
func registryProblem(path string, err error, omit string) (problem, fix string) {
	var errs strictjson.Errors
	var pe *fs.PathError
	switch {
	case errors.As(err, &errs) && len(errs) == 1 && errs[0].Offset > 0:
		// Not JSON: validate would say the same; the place is the fix.
		return path + " is not a valid registry: " + loadProblem(err).Error(), "correct the JSON there (the text quoted is what the file holds from a little before that column), then run 3gs validate " + signature.ShellQuote(path) + " for the rules beyond syntax"
	case errors.As(err, &errs):
		return path + " is not a valid registry: " + loadProblem(err).Error(), "run 3gs validate " + signature.ShellQuote(path) + " to see every problem, then fix them"
	case errors.Is(err, fs.ErrNotExist):
		if omit == "" {
			return path + " does not exist", "check the path; a relative one is read from " + cwd()
		}
		return path + " does not exist", "check --registry (REGISTRY_PATH); a relative path is read from " + cwd() + "; or omit it to " + omit
	case errors.Is(err, fs.ErrPermission) && errors.As(err, &pe):
		return "cannot read " + pe.Path + ": " + pe.Err.Error(), "give the user that runs 3gs read access to it and to the directories above it"
	case errors.Is(err, safefile.ErrTooLarge):
		return err.Error(), "if this is the registry meant, raise --max-registry-bytes (THREEGS_MAX_REGISTRY_BYTES) above its size, for every command that reads it"
	}
	return err.Error(), "check that " + path + " is the registry file"
}

// served is a registry as the server will serve it: the snapshot, its
// signature check, and the file names that get_provenance's verification
// steps use.
type served struct {
	reg   *registry.Registry
	name  string // for messages: a path or "embedded registry.json"
	path  string // absolute path of the registry file; empty when embedded
	sig   signature.Status
	files signature.Files
	// modified is when the registry's bytes last changed: the file's
	// modification time, or for the embedded one when it was signed.
	modified time.Time
}

// loadServed loads the registry at path (the embedded one when empty), of
// at most limit bytes, and checks the signature file beside it. Both files are read together, and an
// interrupted signed write is completed first (signature.ReadSigned).
func loadServed(env *Env, cmd, path string, limit int64) (*served, bool) {
	if path == "" {
		reg, name, ok := loadRegistry(env, cmd, path, limit)
		if !ok {
			return nil, false
		}
		st := signature.Check(reg, threegs.DefaultSignature)
		signedAt, _ := time.Parse(time.RFC3339, st.SignedAt)
		return &served{
			reg: reg, name: name, modified: signedAt,
			sig: st,
			files: signature.Files{
				Registry: "registry.json", Signature: "registry.json.sig", Builtin: true,
				Where: "This registry is built into the 3gs binary; 3gs verify without file names checks that copy. The same two files are registry.json and registry.json.sig at the root of the 3gs source tree (module github.com/three-good-sources/3gs); run the steps there.",
			},
		}, true
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	data, doc, err := signature.ReadSigned(abs, limit)
	var reg *registry.Registry
	if err == nil {
		reg, err = registry.Load(data)
	}
	if err != nil {
		problem, fix := registryProblem(path, err, "serve the embedded registry")
		fmt.Fprintf(env.Stderr, "3gs %s: %s\nFix: %s.\n", cmd, problem, fix)
		return nil, false
	}
	s := &served{reg: reg, name: path, path: abs, sig: signature.Check(reg, doc)}
	if fi, err := os.Stat(abs); err == nil {
		s.modified = fi.ModTime()
	}
	s.files = signature.Files{
		Registry: abs, Signature: abs + signature.Suffix,
		Where: "The server reads " + abs + " and its signature " + abs + signature.Suffix + "; run the steps where you can read both files.",
	}
	if doc == nil {
		s.files.Where = "The server reads " + abs + "; run the steps where you can read it."
	}
	return s, true
}
