package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/registry"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// secretKeyEnv holds a curator key as a 64-hex-character seed, the way
// PKARR tools pass one; it is an alternative to --key-file.
const secretKeyEnv = "PKARR_SECRET_KEY"

type keygenOptions struct{ out string }

func keygenFlags(f *Flags) {
	o := options[keygenOptions](f)
	f.StringVar(&o.out, "out", "THREEGS_KEY_FILE", "", "where to write the new secret key (required; the file must not exist yet)")
}

// runKeygen creates a curator key. The public key goes to stdout alone, so
// scripts can capture it; the advice goes to stderr.
func runKeygen(_ context.Context, env *Env, f *Flags) int {
	out := options[keygenOptions](f).out
	if out == "" || len(f.Args()) > 0 {
		fmt.Fprintln(env.Stderr, "3gs keygen: name the key file to create with --out PATH (or THREEGS_KEY_FILE), e.g. 3gs keygen --out ~/.config/3gs/curator.key")
		return ExitUsage
	}
	key, err := curatorkey.Generate()
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
	if err := curatorkey.WriteKeyFile(out, key); err != nil {
		fmt.Fprintf(env.Stderr, "3gs keygen: %v\n", err)
		return ExitFail
	}
	pub := curatorkey.URI(curatorkey.Public(key))
	fmt.Fprintln(env.Stdout, pub)
	fmt.Fprintf(env.Stderr, "Wrote the secret key to %s (mode 0600). Keep it private and backed up: whoever holds it can sign as you, and without it you cannot sign again under this key.\n"+
		"Next: set \"pubkey\": %q in your registry's \"curator\", then run: 3gs sign --key-file %s REGISTRY\n", out, pub, signature.ShellQuote(out))
	return ExitOK
}

// keyOptions are --key-file and --allow-exposed-key.
type keyOptions struct {
	file         string
	allowExposed bool
}

// keyFlag declares --key-file; PKARR_SECRET_KEY is the other way to pass a key.
func keyFlag(f *Flags, k *keyOptions, usage string) {
	f.StringVar(&k.file, "key-file", "THREEGS_KEY_FILE", "", usage+"; instead of a file, "+secretKeyEnv+" may hold the key as 64 hex characters")
	f.BoolVar(&k.allowExposed, "allow-exposed-key", "THREEGS_ALLOW_EXPOSED_KEY", "use a --key-file that other users may read (mode wider than 0600) instead of refusing it; a warning is still logged")
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
func signingKey(env *Env, k keyOptions, log func(msg string)) (ed25519.PrivateKey, string, error) {
	path, hexSeed := k.file, env.Getenv(secretKeyEnv)
	switch {
	case path != "" && hexSeed != "":
		return nil, "", fmt.Errorf("both --key-file (THREEGS_KEY_FILE) and %s are set; keep one", secretKeyEnv)
	case path != "":
		kf, err := curatorkey.ReadKeyFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("--key-file: %w", err)
		}
		if kf.Exposed {
			if !k.allowExposed {
				return nil, "", &exposedKeyError{path: path, mode: kf.Mode, key: kf.Key}
			}
			if log != nil {
				log(fmt.Sprintf("key file %s has mode %04o, so other users may read the secret key (--allow-exposed-key); run: chmod 600 %s", path, kf.Mode, signature.ShellQuote(path)))
			}
		}
		return kf.Key, "--key-file " + path, nil
	case hexSeed != "":
		key, err := curatorkey.ParseSeed(hexSeed)
		if err != nil {
			return nil, "", fmt.Errorf("%s %w", secretKeyEnv, err)
		}
		return key, secretKeyEnv, nil
	}
	return nil, "", nil
}

// signOptions are sign's flags.
type signOptions struct {
	signedWrite
}

func signFlags(f *Flags) {
	o := options[signOptions](f)
	o.flags(f, "registry file to sign when no PATH is given",
		"the curator's secret key file, as written by 3gs keygen",
		"how long the signature vouches for the registry; readers refuse it after that, so sign again before then",
		"the registry's audit log, which records the signed registry and whose head the signature names; none means REGISTRY.audit.jsonl")
}

// expiresFlag declares --expires, how long a signature written vouches
// for the registry.
func expiresFlag(f *Flags, p *durationFlag, usage string) {
	f.DurationVar(p, "expires", "THREEGS_EXPIRES", signature.DefaultValidity.String(), usage)
}

// minValidity and maxValidity bound --expires: a signature must outlive
// the refresh of whoever reads it, and one that lasts for years is no
// defence against a frozen copy.
const (
	minValidity = time.Hour
	maxValidity = 5 * 366 * 24 * time.Hour
)

// validity is --expires, checked.
func validity(v durationFlag) (time.Duration, error) {
	d, err := v.get()
	if err != nil {
		return 0, err
	}
	if d < minValidity || d > maxValidity {
		return 0, fmt.Errorf("--expires (THREEGS_EXPIRES) is %v; give a duration from %v to %v (e.g. 720h for 30 days)", d, minValidity, maxValidity)
	}
	return d, nil
}

// onePath is the registry file a command works on: its one argument, or
// --registry / REGISTRY_PATH.
func onePath(env *Env, cmd string, args []string, registry string) (string, bool) {
	switch {
	case len(args) == 1:
		return args[0], true
	case len(args) == 0 && registry != "":
		return registry, true
	case len(args) == 0:
		fmt.Fprintf(env.Stderr, "3gs %s: name the registry file, e.g. 3gs %s --key-file KEY registry.json\n", cmd, cmd)
	default:
		fmt.Fprintf(env.Stderr, "3gs %s: one registry file at a time, got %d arguments\n", cmd, len(args))
	}
	return "", false
}

// loadProblem shortens a registry load error to its first problem.
func loadProblem(err error) error {
	var errs strictjson.Errors
	var big *registry.TooLargeError
	if errors.As(err, &big) {
		return fmt.Errorf("%v (--max-registry-bytes, THREEGS_MAX_REGISTRY_BYTES)", big)
	}
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

// loadServed loads the registry at path (the embedded one when empty),
// of at most limit bytes, as serve does (app.Load), saying on stderr why
// it did not load.
func loadServed(env *Env, cmd, path string, limit int64) (*app.Served, bool) {
	s, err := app.Load(path, limit)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs %s: %s\n", cmd, loadFailed(err))
		return nil, false
	}
	return s, true
}

// loadFailed is what to say when app.Load or app.Start failed: a
// registry that did not load with its fix, or the error's own words.
func loadFailed(err error) string {
	var le *app.LoadError
	switch {
	case errors.As(err, &le) && le.Path == "":
		return "the embedded registry.json does not load: " + le.Err.Error() + "\nFix: this is a build problem; rebuild 3gs from a clean checkout."
	case errors.As(err, &le):
		problem, fix := registryProblem(le.Path, le.Err, "serve the embedded registry")
		return problem + "\nFix: " + fix + "."
	}
	return err.Error()
}
